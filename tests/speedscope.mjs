// speedscope.mjs PROFILE: loads a speedscope file written by stackspy into
// speedscope itself (the npm package's offline build, in headless Chromium)
// the way its own command line does: a script calling
// speedscope.loadFileFromBase64(), named by #localProfilePath= in the URL
// of the bundled index.html.  Prints "key=value" lines for
// tests/speedscope.test:
//   importer   what speedscope said it imported the file as
//   title      the page title (the profile name)
//   row        one per function of the Sandwich view: "NAME TOTAL SELF"
//   errors     alerts, page errors, console errors (must be none)
// and a screenshot speedscope.png of the Time Order view.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const cache = path.join(process.env.NODE_CACHE, 'node_modules');
const require = createRequire(cache + '/');
const { chromium } = require('playwright-core');

const profile = path.resolve(process.argv[2]);
const loader = path.resolve('profile.js');
fs.writeFileSync(loader, `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(profile))}, ` +
  `${JSON.stringify(fs.readFileSync(profile).toString('base64'))})`);
const index = path.join(cache, 'speedscope/dist/release/index.html');

const errors = [];
let importer = 'none';
const out = (k, v) => console.log(`${k}=${v}`);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  timeout: 60000,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update',
    '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  page.setDefaultTimeout(20000);
  // speedscope reports a file it cannot read with alert()
  page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); d.dismiss(); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    const t = m.text();
    if (m.type() === 'error') errors.push(`console: ${t}`);
    if (t.startsWith('Importing as ')) importer = t.slice('Importing as '.length);
  });
  await page.goto(`file://${index}#localProfilePath=${loader}`);
  await page.waitForFunction(() => document.title.endsWith(' - speedscope'));
  out('importer', importer);
  out('title', await page.title());
  await page.screenshot({ path: 'speedscope.png' });

  await page.getByText('Sandwich').click();
  await page.waitForFunction(() => document.body.innerText.includes('Symbol Name'));
  const text = await page.evaluate(() => document.body.innerText);
  const re = /(\d+) \([^)\n]*\)\n\t(\d+) \([^)\n]*\)\n\t([^\n]*)/g;
  for (const m of text.matchAll(re)) out('row', `${m[3]} ${m[1]} ${m[2]}`);
} finally {
  await browser.close();
}
out('errors', errors.length ? errors.join(' | ') : 'none');
