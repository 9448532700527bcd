import { request } from './http.js';
import type { Stack } from './stack.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The text exposition format, as far as the suite's assertions need it (no escapes in our labels). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** One instance's `/metrics` (its METRICS_PORT), parsed. */
export async function scrape(stack: Stack, instance: string): Promise<Sample[]> {
  const res = await request(`${stack.metricsOrigins[instance]}/metrics`);
  if (res.status !== 200) throw new Error(`${instance}: GET /metrics answered ${res.status}`);
  return parseMetrics(res.text);
}

/** The sum of a metric's samples whose labels include `labels`. */
export const total = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
