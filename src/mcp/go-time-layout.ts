/**
 * Go's reference-time layouts (`2006-01-02 15:04:05 MST`), for `${nanobot:time}` when the
 * environment sets `TIME_FORMAT` as the Go nanobot reads it. Covers the layout elements Go's
 * `time.Format` documents for dates, clock times, zones and fractions; other text is literal.
 */
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** Wall-clock fields in some zone, plus that zone's offset east of UTC in minutes and its name. */
export interface WallClock {
  year: number;
  month: number; // 1-12
  day: number;
  weekday: number; // 0 = Sunday
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  offsetMinutes: number;
  zoneName: string;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, "0");

function offset(minutes: number, withColon: boolean, zeroAsZ: boolean, withMinutes = true): string {
  if (zeroAsZ && minutes === 0) return "Z";
  const abs = Math.abs(minutes);
  const hh = pad(Math.floor(abs / 60));
  const mm = pad(abs % 60);
  return `${minutes < 0 ? "-" : "+"}${hh}${withMinutes ? `${withColon ? ":" : ""}${mm}` : ""}`;
}

// Longest elements first, so `January` wins over `Jan` and `2006` over `2`.
const ELEMENTS: Array<[string, (t: WallClock) => string]> = [
  ["Z07:00", (t) => offset(t.offsetMinutes, true, true)],
  ["-07:00", (t) => offset(t.offsetMinutes, true, false)],
  ["Z0700", (t) => offset(t.offsetMinutes, false, true)],
  ["-0700", (t) => offset(t.offsetMinutes, false, false)],
  ["Z07", (t) => offset(t.offsetMinutes, false, true, false)],
  ["-07", (t) => offset(t.offsetMinutes, false, false, false)],
  ["January", (t) => MONTHS[t.month - 1]!],
  ["Monday", (t) => DAYS[t.weekday]!],
  ["2006", (t) => pad(t.year, 4)],
  [".000", (t) => `.${pad(t.millisecond, 3)}`],
  [".999", (t) => (t.millisecond ? `.${pad(t.millisecond, 3).replace(/0+$/, "")}` : "")],
  ["Jan", (t) => MONTHS[t.month - 1]!.slice(0, 3)],
  ["Mon", (t) => DAYS[t.weekday]!.slice(0, 3)],
  ["MST", (t) => t.zoneName],
  ["_2", (t) => String(t.day).padStart(2, " ")],
  ["01", (t) => pad(t.month)],
  ["02", (t) => pad(t.day)],
  ["03", (t) => pad(t.hour % 12 === 0 ? 12 : t.hour % 12)],
  ["04", (t) => pad(t.minute)],
  ["05", (t) => pad(t.second)],
  ["06", (t) => pad(t.year % 100)],
  ["15", (t) => pad(t.hour)],
  ["PM", (t) => (t.hour < 12 ? "AM" : "PM")],
  ["pm", (t) => (t.hour < 12 ? "am" : "pm")],
  ["1", (t) => String(t.month)],
  ["2", (t) => String(t.day)],
  ["3", (t) => String(t.hour % 12 === 0 ? 12 : t.hour % 12)],
  ["4", (t) => String(t.minute)],
  ["5", (t) => String(t.second)],
];

export function formatGoLayout(layout: string, t: WallClock): string {
  let out = "";
  for (let i = 0; i < layout.length; ) {
    const hit = ELEMENTS.find(([element]) => layout.startsWith(element, i));
    if (hit) {
      out += hit[1](t);
      i += hit[0].length;
    } else {
      out += layout[i];
      i++;
    }
  }
  return out;
}
