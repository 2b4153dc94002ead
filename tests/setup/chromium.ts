import { chromium, type BrowserContext } from 'playwright-core';
import { tempDir } from '../helpers/temp.js';

/** A headless Debian Chromium with a fresh profile, driven by playwright-core. */
export interface TestChromium { readonly context: BrowserContext; close(): Promise<void> }

/** Launches `/usr/bin/chromium` headless in a fresh `--user-data-dir` (the project's browser flags). */
export async function launchChromium(): Promise<TestChromium> {
  const profile = tempDir('vigil-chromium-');
  const context = await chromium.launchPersistentContext(profile.path, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    viewport: { width: 1280, height: 900 },
    timeout: 120_000,
  });
  context.setDefaultTimeout(60_000);
  return {
    context,
    async close() {
      await context.close();
      profile.cleanup();
    },
  };
}
