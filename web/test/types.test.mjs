// index.d.ts's camelCase op helpers are generated from the op list (scripts/gen_types.mjs, run by
// `npm run build`): the committed file must be what the generator makes of today's ops.inc.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TYPES_FILE, generateTypes, opList } from '../scripts/gen_types.mjs';
import { helperName } from '../src/runtime.js';

const types = readFileSync(TYPES_FILE, 'utf8');

it('index.d.ts declares the helpers of ops.inc, as generated (else: node scripts/gen_types.mjs)', () => {
  assert.equal(types, generateTypes(types));
  for (const op of opList()) {
    const params = [...op.inputs.map((i) => `${i}: TensorLike`)].join(', ');
    assert.ok(types.includes(`  ${helperName(op.name)}(${params}, attrs`), op.name);
  }
});

it('a changed op list changes the generated block', () => {
  const ops = opList();
  const added = [...ops, { name: 'MaxPoolGradV2', stem: 'max_pool_grad', inputs: ['orig_input', 'orig_output', 'grad'], outputs: ['output'] }];
  assert.ok(generateTypes(types, added).includes(
    '  maxPoolGradV2(orig_input: TensorLike, orig_output: TensorLike, grad: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };\n'));
  assert.notEqual(generateTypes(types, ops.slice(1)), types);
});
