/**
 * A small Prometheus registry: counters and histograms with labels, gauges read when scraped,
 * rendered in the text exposition format (version 0.0.4). Enough for `/metrics`; no client
 * library needed for a handful of series.
 */

type Labels = Record<string, string>;

interface Series {
  labels: Labels;
  value: number;
}

interface HistogramSeries {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Seconds: from a quick store write to a long agent turn. */
export const DEFAULT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The series' key: its labels sorted by name. Called on every observation, so no arrays for 0–2 labels. */
function labelKey(labels: Labels): string {
  let first: string | undefined;
  let second: string | undefined;
  let more = false;
  for (const k in labels) {
    if (first === undefined) first = k;
    else if (second === undefined) second = k;
    else {
      more = true;
      break;
    }
  }
  if (first === undefined) return "";
  if (more) {
    return Object.keys(labels)
      .sort()
      .map((k) => `${k}=${labels[k]}`)
      .join(",");
  }
  if (second === undefined) return `${first}=${labels[first]}`;
  const [a, b] = first < second ? [first, second] : [second, first];
  return `${a}=${labels[a]},${b}=${labels[b]}`;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function renderLabels(labels: Labels, extra?: [string, string]): string {
  const pairs = Object.entries(labels);
  if (extra) pairs.push(extra);
  return pairs.length ? `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}` : "";
}

function renderNumber(value: number): string {
  if (value === Infinity) return "+Inf";
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(12)));
}

export class Counter {
  private readonly series = new Map<string, Series>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    const entry = this.series.get(key);
    if (entry) entry.value += by;
    else this.series.set(key, { labels, value: by });
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const s of this.series.values()) lines.push(`${this.name}${renderLabels(s.labels)} ${renderNumber(s.value)}`);
    return lines;
  }
}

export class Histogram {
  private readonly series = new Map<string, HistogramSeries>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[] = DEFAULT_BUCKETS,
  ) {}

  observe(value: number, labels: Labels = {}): void {
    const key = labelKey(labels);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    const { buckets } = this;
    for (let i = buckets.length - 1; i >= 0 && value <= buckets[i]!; i--) entry.counts[i]!++;
    entry.sum += value;
    entry.count++;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values()) {
      this.buckets.forEach((bound, i) => lines.push(`${this.name}_bucket${renderLabels(s.labels, ["le", renderNumber(bound)])} ${s.counts[i]}`));
      lines.push(`${this.name}_bucket${renderLabels(s.labels, ["le", "+Inf"])} ${s.count}`);
      lines.push(`${this.name}_sum${renderLabels(s.labels)} ${renderNumber(s.sum)}`);
      lines.push(`${this.name}_count${renderLabels(s.labels)} ${s.count}`);
    }
    return lines;
  }
}

/**
 * A value read when scraped: a gauge (queue lengths, running turns), or a counter some other
 * part keeps (the process's CPU seconds).
 */
export class Gauge {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => number,
    readonly type: "gauge" | "counter" = "gauge",
  ) {}

  render(): string[] {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`, `${this.name} ${renderNumber(this.read())}`];
  }
}

export class MetricsRegistry {
  private readonly metrics: Array<Counter | Histogram | Gauge> = [];

  counter(name: string, help: string): Counter {
    return this.add(new Counter(name, help));
  }

  histogram(name: string, help: string, buckets?: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, buckets));
  }

  gauge(name: string, help: string, read: () => number): Gauge {
    return this.add(new Gauge(name, help, read));
  }

  /** A counter kept elsewhere, read when scraped. */
  counterOf(name: string, help: string, read: () => number): Gauge {
    return this.add(new Gauge(name, help, read, "counter"));
  }

  render(): string {
    return `${this.metrics.flatMap((m) => m.render()).join("\n")}\n`;
  }

  private add<M extends Counter | Histogram | Gauge>(metric: M): M {
    this.metrics.push(metric);
    return metric;
  }
}
