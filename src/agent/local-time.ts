/**
 * "Current time" for the system prompt. With no configured time zone the process's local time
 * is formatted from Date's own fields: Intl's first use loads ICU time-zone data (~30 ms), which
 * a one-shot `nanobot agent -m` would otherwise pay before its first request. A configured zone
 * goes through Intl, with one cached formatter per zone.
 */

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

const formatters = new Map<string, Intl.DateTimeFormat>();

/** `UTC`, `UTC+02:00`, `UTC-05:30` for a `Date#getTimezoneOffset()` value (minutes west of UTC). */
export function offsetLabel(offsetMinutes: number): string {
  if (offsetMinutes === 0) return "UTC";
  const east = -offsetMinutes;
  const abs = Math.abs(east);
  return `UTC${east > 0 ? "+" : "-"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

/** en-US "full" date and "short" time: `Wednesday, December 2, 2026 at 3:05 PM`. */
function formatLocal(now: Date): string {
  const hours = now.getHours();
  const minutes = String(now.getMinutes()).padStart(2, "0");
  const hour12 = hours % 12 === 0 ? 12 : hours % 12;
  return `${WEEKDAYS[now.getDay()]}, ${MONTHS[now.getMonth()]} ${now.getDate()}, ${now.getFullYear()} at ${hour12}:${minutes} ${hours < 12 ? "AM" : "PM"}`;
}

/** The time and the zone's name; `timezone` is an IANA name (invalid → ISO time in UTC). */
export function describeNow(now: Date, timezone: string | undefined, env: Record<string, string | undefined> = process.env): { time: string; zone: string } {
  if (!timezone) return { time: formatLocal(now), zone: env.TZ || offsetLabel(now.getTimezoneOffset()) };
  try {
    let formatter = formatters.get(timezone);
    if (!formatter) {
      formatter = new Intl.DateTimeFormat("en-US", { timeZone: timezone, dateStyle: "full", timeStyle: "short" });
      formatters.set(timezone, formatter);
    }
    // ICU puts a narrow no-break space before AM/PM; a plain space reads the same to a model.
    return { time: formatter.format(now).replace(/\u202f/g, " "), zone: timezone };
  } catch {
    return { time: now.toISOString(), zone: "UTC" };
  }
}
