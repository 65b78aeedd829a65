// Headless Chromium for the browser tests: playwright-core driving the system's chromium
// (CHROMIUM_PATH overrides /usr/bin/chromium) with a fresh profile, plus the demo server.
// skip: a reason when playwright-core or the binary is missing, else false.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { start } from '../../demo/serve.mjs';

export const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
let chromium = null;
try {
  ({ chromium } = await import('playwright-core'));
} catch {
  chromium = null;
}
export const skip = !chromium ? 'playwright-core is not installed (npm install in web/)' : !existsSync(executablePath) ? `no Chromium at ${executablePath}` : false;
export const results = new URL('../../test-results/', import.meta.url);

// The errors a page reports, collected as they come: uncaught exceptions and console errors
// (a resource that fails to load, the stylesheet among them, is one).
export function pageErrors(page) {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return errors;
}

// -> { context, server, url(path), close() }
export async function launch(viewport = { width: 1000, height: 900 }) {
  const server = await start(0);
  const profile = mkdtempSync(join(tmpdir(), 'gradrt-chromium-'));
  let context;
  try {
    // A fresh profile: playwright passes it to Chromium as --user-data-dir.
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      viewport,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
  } catch (e) {
    server.close();
    rmSync(profile, { recursive: true, force: true });
    throw e;
  }
  return {
    context,
    server,
    url: (path) => `http://127.0.0.1:${server.address().port}${path}`,
    async close() {
      await context.close();
      server.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
