import { metrics } from '../metrics.js';

/**
 * What a scrape of this process would show for `name`: the sum of its series whose labels
 * include `labels` (0 when there is none). `series` picks a histogram's `_count`, `_sum` or
 * `_bucket`. Tests compare it before and after (the registry is the process's, shared by every
 * test of a file).
 */
export async function metricValue(
  name: string,
  labels: Record<string, string> = {},
  series: string = name,
): Promise<number> {
  const family = await metrics.getSingleMetric(name)?.get();
  return (family?.values ?? [])
    .filter(
      (v) =>
        ((v as { metricName?: string }).metricName ?? name) === series &&
        Object.entries(labels).every(
          ([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want,
        ),
    )
    .reduce((sum, v) => sum + v.value, 0);
}

/** Whether `name` has any series in a scrape now (a gauge whose read failed, or was stopped, has none). */
export async function metricReported(name: string): Promise<boolean> {
  return ((await metrics.getSingleMetric(name)?.get())?.values ?? []).length > 0;
}
