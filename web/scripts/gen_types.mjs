// The camelCase op helpers of index.d.ts, generated from the op list
// (core/include/gradrt/ops.inc): one method per GRADRT_OP row, its inputs in TensorFlow's
// order, then attrs, then options, returning the op's outputs by name.
//   node scripts/gen_types.mjs          rewrites the generated block of index.d.ts
//   node scripts/gen_types.mjs --check  exits 1 when index.d.ts differs from the op list
// `npm run build` runs it; test/types.test.mjs fails when the committed file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { helperName } from '../src/runtime.js';

const OPS_INC = new URL('../../core/include/gradrt/ops.inc', import.meta.url);
export const TYPES_FILE = new URL('../index.d.ts', import.meta.url);
const BEGIN = '  // BEGIN generated from core/include/gradrt/ops.inc by scripts/gen_types.mjs: do not edit';
const END = '  // END generated';

// What ops.inc does not say, by op stem. Ops with attributes TensorFlow requires (no default):
// attrs is a required parameter of their helper.
const REQUIRED_ATTRS = new Set([
  'conv2d', 'conv2d_backprop_input', 'conv2d_backprop_filter',
  'depthwise_conv2d_native', 'depthwise_conv2d_native_backprop_input', 'depthwise_conv2d_native_backprop_filter',
  'fractional_avg_pool',
  'max_pool', 'max_pool_grad', 'avg_pool', 'avg_pool_grad',
]);
// Helpers typed as returning the generic Outputs since the first release (kept: narrowing them
// would break code that indexes the result by a string).
const RETURNS_OUTPUTS = new Set(['fused_batch_norm']);
// Outputs whose dtype is fixed, by output name.
const OUTPUT_TYPES = { row_pooling_sequence: "Tensor<'int64'>", col_pooling_sequence: "Tensor<'int64'>" };

// GRADRT_OP(Name, stem, "inputs", "outputs") rows of ops.inc.
export function opList(text = readFileSync(OPS_INC, 'utf8')) {
  return [...text.matchAll(/^GRADRT_OP\((\w+),\s*(\w+),\s*"([^"]*)",\s*"([^"]*)"\)/gm)].map(([, name, stem, i, o]) => ({
    name, stem, inputs: i.split(','), outputs: o.split(','),
  }));
}

function helper(op) {
  const params = op.inputs.map((input) => `${input}: TensorLike`);
  params.push(REQUIRED_ATTRS.has(op.stem) ? 'attrs: Attrs' : 'attrs?: Attrs', 'options?: RunOptions');
  const result = RETURNS_OUTPUTS.has(op.stem)
    ? 'Outputs'
    : `{ ${op.outputs.map((o) => `${o}: ${OUTPUT_TYPES[o] ?? 'Tensor'}`).join('; ')} }`;
  return `  ${helperName(op.name)}(${params.join(', ')}): ${result};`;
}

// `types` (the text of index.d.ts) with its generated block rebuilt from `ops`.
export function generateTypes(types, ops = opList()) {
  const begin = types.indexOf(BEGIN), end = types.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`index.d.ts: the markers "${BEGIN.trim()}" / "${END.trim()}" are missing`);
  return types.slice(0, begin) + [BEGIN, ...ops.map(helper), ''].join('\n') + types.slice(end);
}

// Brings index.d.ts up to date with ops.inc (check: only says whether it is). True when it was.
export function updateTypes({ check = false } = {}) {
  const current = readFileSync(TYPES_FILE, 'utf8');
  const wanted = generateTypes(current);
  if (current === wanted) return true;
  if (check) {
    console.error('web/index.d.ts disagrees with ops.inc: run node web/scripts/gen_types.mjs');
  } else {
    writeFileSync(TYPES_FILE, wanted);
    console.log('web/index.d.ts: op helpers regenerated from ops.inc');
  }
  return false;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  if (!updateTypes({ check }) && check) process.exit(1);
}
