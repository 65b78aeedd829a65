// The training page's data: the 1,797 8x8 handwritten digits that Debian's python3-sklearn
// ships (UCI "optdigits" test set, pixels 0..16), converted into web/dist/digits.bin with a
// fixed train / held-out split. Run by `npm run build`; alone: node scripts/digits.mjs [csv.gz].
//
// digits.bin layout (all bytes):
//   "GRDIGIT1"             8-byte magic + format version
//   u16le nTrain, u16le nHeld
//   nTrain + nHeld records of 65 bytes: label (0..9), then 64 pixels (0..16) row-major.
// Training records come first. Split: record i of the CSV is held out when i % 4 == 3 (the CSV
// is ordered by writer, roughly: a modular split spreads held-out digits over all writers'
// blocks and all classes; 449 held out, 1,348 train).
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export const DIGITS_CSV = '/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz';
const MAGIC = 'GRDIGIT1';

export function convertDigits(csvGz = DIGITS_CSV, out) {
  const rows = gunzipSync(readFileSync(csvGz)).toString('ascii').split('\n').filter((l) => l.trim());
  const train = [], held = [];
  rows.forEach((line, i) => {
    const v = line.split(',').map(Number);
    if (v.length !== 65) throw new Error(`${csvGz}: row ${i + 1} has ${v.length} fields, expected 64 pixels + label`);
    const label = v[64];
    if (!(label >= 0 && label <= 9) || v.some((p) => !Number.isInteger(p) || p < 0 || p > 16)) throw new Error(`${csvGz}: row ${i + 1} is not 64 pixels in 0..16 and a label in 0..9`);
    (i % 4 === 3 ? held : train).push([label, ...v.slice(0, 64)]);
  });
  const bytes = new Uint8Array(12 + 65 * rows.length);
  bytes.set(Buffer.from(MAGIC, 'ascii'), 0);
  const view = new DataView(bytes.buffer);
  view.setUint16(8, train.length, true);
  view.setUint16(10, held.length, true);
  [...train, ...held].forEach((r, i) => bytes.set(r, 12 + 65 * i));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, bytes);
  return { train: train.length, held: held.length, bytes: bytes.length };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const web = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const src = process.argv[2] || DIGITS_CSV;
  if (!existsSync(src)) throw new Error(`${src} not found: apt-get install python3-sklearn`);
  const r = convertDigits(src, join(web, 'dist', 'digits.bin'));
  console.log(`dist/digits.bin: ${r.train} train + ${r.held} held-out digits, ${r.bytes} bytes`);
}
