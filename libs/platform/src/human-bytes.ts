const UNITS = ['KiB', 'MiB', 'GiB', 'TiB'];

/**
 * A size for people: `1048576` → `1 MiB`, `1536` → `1.5 KiB`, `900` → `900 bytes` (binary units,
 * at most one decimal, none when whole). Used in every message that states a size limit. Written
 * here rather than taken from pretty-bytes, which spells the IEC unit `kiB`.
 */
export function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const rounded = Math.round(value * 10) / 10;
  return `${Number.isInteger(rounded) ? rounded.toFixed(0) : rounded.toFixed(1)} ${UNITS[unit]}`;
}
