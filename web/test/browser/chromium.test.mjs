// The demo page in headless Chromium (playwright-core, the system's chromium): loads it,
// runs every op of the page on both builds, checks agreement with the in-page JS
// reference, saves a screenshot under web/test-results/. Skipped when playwright-core or
// a Chromium binary is missing (see launch.js).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { launch, pageErrors, results, skip } from './launch.js';

describe('demo page in headless Chromium', { skip }, () => {
  let browser, context;
  before(async () => {
    browser = await launch();
    ({ context } = browser);
  });
  after(async () => {
    await browser?.close();
  });

  for (const simd of [true, false]) {
    it(`runs every op and agrees with the JS reference (${simd ? 'SIMD' : 'scalar'} build)`, async () => {
      const page = await context.newPage();
      const errors = pageErrors(page);
      await page.goto(browser.url(`/demo/${simd ? '' : '?simd=false'}`));
      const info = await page.evaluate(() => window.gradrtDemo.ready);
      assert.equal(info.simd, simd);
      const ops = await page.evaluate(() => window.gradrtDemo.ops);
      assert.ok(ops.length >= 6);
      for (const op of ops) {
        const r = await page.evaluate((config) => window.gradrtDemo.run(config), { op, h: 20, w: 20, c: 16, m: 8, s: op.includes('Filter') ? 2 : 1 });
        assert.ok(r.agrees, `${op}: relative error ${r.relErr}`);
        assert.ok(r.ms > 0 && Number.isFinite(r.gflops));
      }
      // The form path, as a user clicks it.
      await page.selectOption('#op', 'Conv2DBackpropInput');
      await page.click('#run');
      await page.waitForSelector('#agreement');
      assert.equal(await page.textContent('#agreement'), 'agrees');
      mkdirSync(results, { recursive: true });
      await page.screenshot({ path: new URL(`demo-${simd ? 'simd' : 'scalar'}.png`, results).pathname, fullPage: true });
      assert.deepEqual(errors, []);
      await page.close();
    });
  }

  // demo/serve.mjs sends COOP/COEP: the page is cross-origin isolated, so threads: 2 loads the
  // pthread build (Web Workers over a SharedArrayBuffer heap).
  it('threaded build on the cross-origin isolated page (?threads=2)', { skip: !existsSync(new URL('../../dist/gradrt-simd-threads.wasm', import.meta.url)) && 'no threaded build' }, async () => {
    const page = await context.newPage();
    const errors = pageErrors(page);
    await page.goto(browser.url('/demo/?threads=2'));
    const info = await page.evaluate(() => window.gradrtDemo.ready);
    assert.deepEqual([info.crossOriginIsolated, info.simd, info.threads], [true, true, 2]);
    for (const op of await page.evaluate(() => window.gradrtDemo.ops)) {
      const r = await page.evaluate((config) => window.gradrtDemo.run(config), { op, h: 24, w: 24, c: 16, m: 8, s: op.includes('Filter') ? 2 : 1 });
      assert.ok(r.agrees, `${op}: relative error ${r.relErr}`);
      assert.equal(r.threads, 2);
    }
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('without COOP/COEP, ?threads=2 falls back to one thread, without an error', async () => {
    const page = await context.newPage();
    const errors = pageErrors(page);
    await page.route('**/*', async (route) => {
      const response = await route.fetch();
      const headers = { ...response.headers() };
      for (const h of ['cross-origin-opener-policy', 'cross-origin-embedder-policy']) delete headers[h];
      await route.fulfill({ response, headers });
    });
    await page.goto(browser.url('/demo/?threads=2'));
    const info = await page.evaluate(() => window.gradrtDemo.ready);
    assert.deepEqual([info.crossOriginIsolated, info.simd, info.threads], [false, true, 1]);
    const r = await page.evaluate((config) => window.gradrtDemo.run(config), { op: 'Conv2DBackpropInput', h: 12, w: 12, c: 8, m: 8, s: 1 });
    assert.ok(r.agrees, `relative error ${r.relErr}`);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
