/**
 * Number and time formatting for the HTML report's server-rendered parts. The page's client
 * script (`assets/report.client.js`) has the same rules for what it renders, so a value reads
 * the same in the header, the charts, the case table and a case's details.
 */
import { formatP } from '../../stats/summarise.js';

/** A proportion in [0, 1] as a whole percentage (`0.667` → `67%`); `—` for null. */
export function fmtPct(p: number | null | undefined): string {
  return p === null || p === undefined || !Number.isFinite(p) ? '—' : `${Math.round(p * 100)}%`;
}

/** A difference of proportions as signed percentage points (`0.5` → `+50 pts`); `—` for null. */
export function fmtPts(d: number | null | undefined): string {
  if (d === null || d === undefined || !Number.isFinite(d)) return '—';
  const v = Math.round(d * 100);
  return `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(v)} pts`;
}

/** A duration in milliseconds, short: `850 ms`, `4.1 s`, `3m 05s`, `1h 02m`; `—` for null. */
export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const a = Math.abs(ms);
  const sign = ms < 0 ? '−' : '';
  if (a < 1000) return `${sign}${Math.round(a)} ms`;
  if (a < 60_000) return `${sign}${(a / 1000).toFixed(a < 10_000 ? 1 : 0)} s`;
  const s = Math.round(a / 1000);
  if (s < 3600) return `${sign}${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${sign}${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** A token count, short: `850`, `75.2k`, `1.24M`; `—` for null. */
export function fmtTokens(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  const a = Math.abs(n);
  const sign = n < 0 ? '−' : '';
  if (a < 1000) return `${sign}${Math.round(a)}`;
  if (a < 1_000_000) return `${sign}${(a / 1000).toFixed(a < 10_000 ? 2 : 1).replace(/\.?0+$/, '')}k`;
  return `${sign}${(a / 1_000_000).toFixed(2).replace(/\.?0+$/, '')}M`;
}

/** An amount in USD: `$1.20`, `$0.0042` below a cent; `—` for null. */
export function fmtUsd(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return '—';
  return usd !== 0 && Math.abs(usd) < 0.01 ? `$${usd.toPrecision(2)}` : `$${usd.toFixed(2)}`;
}

/** A whole number with thousands separators (`12345` → `12,345`). */
export function fmtInt(n: number): string {
  // By hand: the first toLocaleString of a process loads ICU's number data (about 15 ms).
  if (!Number.isFinite(n)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(Math.round(n)));
  let out = digits.slice(0, digits.length % 3 || 3);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return Math.round(n) < 0 ? `-${out}` : out;
}

/** An ISO 8601 instant as `YYYY-MM-DD HH:MM:SS UTC`; the input unchanged when it does not parse. */
export function fmtDate(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return `${new Date(t).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A p-value as every report writes it (`formatP`: `0.031`, `1`, `4.9e-4`, never `0.000`); `—` for null. */
export function fmtP(p: number | null | undefined): string {
  return p === null || p === undefined || !Number.isFinite(p) ? '—' : formatP(p);
}
