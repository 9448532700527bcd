import { deflateSync } from 'node:zlib';
import type { AttachmentKind } from './plan.js';

/** Small generated attachments of the demo data set, with the right magic bytes for their type. */

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A valid 32×32 RGB PNG (a two-colour "screenshot"), a few hundred bytes. */
export function demoPng(seed: number): Buffer {
  const size = 32;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour, deflate, no filter, no interlace
  const rows: number[] = [];
  for (let y = 0; y < size; y++) {
    rows.push(0);
    for (let x = 0; x < size; x++) {
      const bar = y < 6;
      rows.push(
        bar ? 40 : 240,
        bar ? 90 + (seed % 100) : 240,
        bar ? 160 : 240 - ((x + y) % 8 === 0 ? 60 : 0),
      );
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(Buffer.from(rows))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A minimal well-formed one-page PDF (correct xref offsets) with one line of text. */
export function demoPdf(text: string): Buffer {
  const safe = text.replace(/[\\()]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, '?');
  const content = `BT /F1 14 Tf 72 720 Td (${safe}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, n) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${n + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

export function demoFile(
  kind: AttachmentKind,
  i: number,
  title: string,
): { filename: string; content: Buffer } {
  if (kind === 'png') return { filename: `screenshot-${i + 1}.png`, content: demoPng(i) };
  if (kind === 'pdf')
    return { filename: `report-${i + 1}.pdf`, content: demoPdf(`Support Desk demo: ${title}`) };
  const lines = Array.from(
    { length: 12 },
    (_, n) =>
      `2024-05-0${(n % 9) + 1}T10:${String(n * 4).padStart(2, '0')}:00Z WARN ${title} (attempt ${n + 1})`,
  );
  return { filename: `log-${i + 1}.txt`, content: Buffer.from(`${lines.join('\n')}\n`) };
}
