/** Display helpers; `timeZone` is an IANA name or '' for the browser's. */

export function fmtCount(free: number | null, total: number | null): string {
  if (total === null || total === undefined) {
    return '—';
  }
  return `${free ?? '?'}/${total}`;
}

/** H:MM:SS (to the second, for elapsed times and limits). */
export function fmtHms(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !isFinite(seconds)) {
    return '—';
  }
  const s = Math.max(0, Math.round(seconds));
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${Math.floor(s / 3600)}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}

/** A wait for people, as the server words it: s below a minute, whole minutes (rounded up)
 * below an hour, else hours with one decimal. */
export function fmtWait(seconds: number): string {
  const s = Math.max(0, seconds);
  if (s < 60) {
    return `${Math.round(s)} s`;
  }
  if (s < 3600) {
    return `${Math.ceil(s / 60)} min`;
  }
  return `${(s / 3600).toFixed(1)} h`;
}

/** A queued job's predicted start from `now` (ms): "≈ 3 min (90%: < 11 min)", or
 * "≈ 3 min (scheduler's estimate)" when that is all there is; null without a prediction. */
export function fmtPredictedStart(
  p: { at: string; bound: string | null; source?: string | null } | null | undefined,
  now: number
): string | null {
  const at = p ? parseTime(p.at) : null;
  if (!p || at === null) {
    return null;
  }
  const bound = parseTime(p.bound);
  const text = `≈ ${fmtWait((at - now) / 1000)}`;
  if (bound === null) {
    return p.source === 'scheduler' ? `${text} (scheduler's estimate)` : text;
  }
  return `${text} (90%: < ${fmtWait((bound - now) / 1000)})`;
}

/** What a predicted start rests on, for a tooltip: a 90% bound is named only when there is
 * one, "calibrated" only when the placement says so. */
export function predictionSource(
  p: { source?: string | null; bound?: string | null } | null | undefined
): string {
  switch (p?.source) {
    case 'scheduler':
      return "predicted start: the scheduler's own estimate (no calibration samples yet)";
    case 'simulation':
      return 'predicted start: simulated from the queue and walltime requests';
  }
  const kind = p?.source === 'calibrated' ? 'calibrated estimate' : 'estimate';
  return p?.bound ? `predicted start: ${kind} (90% upper bound)` : `predicted start: ${kind}`;
}

export function fmtDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !isFinite(seconds)) {
    return '—';
  }
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) {
    return `${s} s`;
  }
  if (s < 3600) {
    return `${Math.round(s / 60)} min`;
  }
  if (s < 86400) {
    const h = Math.floor(s / 3600);
    const m = Math.round((s % 3600) / 60);
    return m ? `${h} h ${m} min` : `${h} h`;
  }
  const d = Math.floor(s / 86400);
  const h = Math.round((s % 86400) / 3600);
  return h ? `${d} d ${h} h` : `${d} d`;
}

export function parseTime(iso: string | null | undefined): number | null {
  if (!iso) {
    return null;
  }
  const t = Date.parse(iso);
  return isNaN(t) ? null : t;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
/** Instants already written, by formatter key and instant: a timeline of a thousand jobs
 * writes each job's times again at every redraw. */
const written = new Map<string, string>();
const MAX_WRITTEN = 20_000;

/** `value` in `map` under `key`, computed by `make` the first time; the map is emptied
 * when it reaches `max` entries. */
function remembered<V>(map: Map<string, V>, max: number, key: string, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    if (map.size >= max) {
      map.clear();
    }
    v = make();
    map.set(key, v);
  }
  return v;
}

export function fmtTime(
  value: string | number | null | undefined,
  timeZone = '',
  withDate = true,
  withSeconds = false
): string {
  const t = typeof value === 'number' ? value : parseTime(value);
  if (t === null) {
    return '—';
  }
  const key = `${timeZone}|${withDate}|${withSeconds}`;
  return remembered(written, MAX_WRITTEN, `${key}|${t}`, () => formatTime(t, key, timeZone, withDate, withSeconds));
}

function formatTime(t: number, key: string, timeZone: string, withDate: boolean, withSeconds: boolean): string {
  let f = formatters.get(key);
  if (!f) {
    const opts: Intl.DateTimeFormatOptions = {
      hour: '2-digit',
      minute: '2-digit',
      ...(withSeconds ? { second: '2-digit' } : {}),
      ...(withDate ? { month: 'short', day: 'numeric' } : {})
    };
    try {
      f = new Intl.DateTimeFormat(undefined, {
        ...opts,
        ...(timeZone ? { timeZone } : {})
      });
    } catch {
      f = new Intl.DateTimeFormat(undefined, opts); // unknown time zone
    }
    formatters.set(key, f);
  }
  return f.format(new Date(t));
}

const dayFormatters = new Map<string, Intl.DateTimeFormat>();

/** Whether the instants `a` and `b` (ms) fall on the same calendar day in `timeZone`. */
export function sameDay(a: number, b: number, timeZone = ''): boolean {
  const f = remembered(dayFormatters, 100, timeZone, () => {
    const opts: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'numeric', day: 'numeric' };
    try {
      return new Intl.DateTimeFormat('en-CA', { ...opts, ...(timeZone ? { timeZone } : {}) });
    } catch {
      return new Intl.DateTimeFormat('en-CA', opts); // unknown time zone: the browser's
    }
  });
  return f.format(a) === f.format(b);
}

export function stateClass(state: string): string {
  return `jp-diamond-state-${state.toLowerCase()}`;
}

/** An element id of `prefix` and `name` that no other name gives: every character but
 * ASCII letters, digits and '-' becomes `_HEX_` (its code), so "東京" and "大阪" (or
 * "a:1" and "a_1") stay apart. */
export function domId(prefix: string, name: string): string {
  return prefix + name.replace(/[^A-Za-z0-9-]/g, c => `_${c.charCodeAt(0).toString(16)}_`);
}

/** Terminal control sequences a job's output may hold: CSI (colours, cursor moves), OSC
 * (titles, hyperlinks) ended by BEL or ST, and the other two-character escapes. */
const TERMINAL_CODES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]/g;

/** A job's output as the text a terminal would show, its colour and link codes left out
 * (never drawn as markup: the caller renders a string). */
export function terminalText(output: string): string {
  return output.replace(TERMINAL_CODES, '');
}

/** Glyphs drawn about twice as wide as a Latin letter: emoji, CJK, Hangul, full-width forms. */
const WIDE_GLYPH =
  /\p{Extended_Pictographic}|[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u;

let glyphSegmenter: Intl.Segmenter | null = null;

/** A job array's tasks in words, the most numerous state first: "8 tasks: 5 PENDING,
 * 3 RUNNING"; '' for a job that is not an array. */
export function arrayTasksText(tasks: { total: number; states: Record<string, number> } | null | undefined): string {
  return tasks ? countsText(tasks.total, tasks.states, 'task') : '';
}

/** "25 steps: 20 COMPLETED, 3 RUNNING, 2 PENDING": `total` `noun`s and how many are in
 * each state, the most common first. */
export function countsText(total: number, states: Record<string, number>, noun: string): string {
  const said = Object.entries(states)
    .sort(([a, m], [b, n]) => n - m || a.localeCompare(b))
    .map(([state, n]) => `${n} ${state}`);
  return `${total} ${noun}${total === 1 ? '' : 's'}: ${said.join(', ')}`;
}

/** `text` cut to fit `columns` Latin letters' width, with '…' in place of what is left out:
 * between whole glyphs (grapheme clusters: an emoji of several code points, a letter and
 * its accents), a wide glyph counted as two columns. */
export function cutToColumns(text: string, columns: number): string {
  if (2 * text.length <= columns) {
    return text; // no glyph is wider than two columns nor made of no code unit
  }
  return remembered(cuts, MAX_WRITTEN, `${columns}|${text}`, () => cut(text, columns));
}

const cuts = new Map<string, string>();

function cut(text: string, columns: number): string {
  glyphSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  const glyphs = Array.from(glyphSegmenter.segment(text), s => s.segment);
  const width = (glyph: string) => (WIDE_GLYPH.test(glyph) ? 2 : 1);
  if (glyphs.reduce((sum, g) => sum + width(g), 0) <= columns) {
    return text;
  }
  let used = 1; // the ellipsis
  let kept = 0;
  while (kept < glyphs.length && used + width(glyphs[kept]) <= columns) {
    used += width(glyphs[kept++]);
  }
  return glyphs.slice(0, kept).join('') + '…';
}
