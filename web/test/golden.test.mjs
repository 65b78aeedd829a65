// TensorFlow's own test numbers and ops.md's worked examples (../tests/data/golden/*.json, the
// files the C++ suite reads too), run through the npm package on both wasm flavours.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FLAVOURS, runtime } from './util.js';
import { attrs, checkValues, loadData, tensor } from './data.js';

const FILES = loadData('golden');

// One run per dtype of "dtypes" (inputs of dtype "T" take it) and per op: the case's own, then
// each of "variants" (another op name, inputs added or dropped).
function* runs(c) {
  for (const dtype of c.dtypes || ['float32']) {
    for (const v of [null, ...(c.variants || [])]) {
      const spec = { ...c.inputs };
      for (const name of (v && v.drop) || []) delete spec[name];
      Object.assign(spec, (v && v.inputs) || {});
      const inputs = Object.fromEntries(Object.entries(spec).map(([k, t]) => [k, tensor(t, dtype)]));
      yield { op: v ? v.op : c.op, dtype, inputs };
    }
  }
}

for (const [flavour, options] of FLAVOURS) {
  describe(`goldens (${flavour})`, async () => {
    const rt = await runtime(options);
    for (const { file, doc } of FILES) {
      for (const c of doc.cases) {
        it(`${file}: ${c.name}`, () => {
          for (const { op, dtype, inputs } of runs(c)) {
            const label = `${op} ${dtype}`;
            const out = Object.values(rt.runOp(op, inputs, attrs(c.attrs)));
            for (const o of c.outputs) {
              const t = out[o.index];
              if (o.shape) assert.deepEqual(t.shape, o.shape.map(Number), `${label} output ${o.index} shape`);
              if (!o.values) continue;
              const rtol = o.rtol ?? (c.rtol && c.rtol[dtype]) ?? 1e-6;
              checkValues(assert, t, o.values, { rtol, atol: o.atol ?? 1e-5, label: `${label} output ${o.index}` });
            }
          }
        });
      }
    }
  });
}
