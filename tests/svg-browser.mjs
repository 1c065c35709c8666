// svg-browser.mjs SVG: opens a flamegraph written by stackspy in headless
// Chromium and uses it as a person would (tests/svg-browser.test asserts on
// what this prints).  Prints "key=value" lines:
//   frames        <g> frames in #frames
//   hover         the details line with the mouse over the frame "f3"
//   search        #matched after Ctrl-F and typing REGEX into the prompt
//   highlighted   frames drawn in the highlight colour
//   zoom_*        after a click on "f2": widths of f2, f3 and main, whether
//                 h is hidden, main's class, whether Reset Zoom shows
//   unzoom_*      after a click on Reset Zoom: f3's x and width
//   cleared       #matched and highlighted frames after Escape
//   errors        page errors and console errors (must be none)
// and screenshots shot.png (as opened), search.png, zoom.png.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.NODE_CACHE, 'node_modules/'));
const { chromium } = require('playwright-core');

const [svg, regex] = process.argv.slice(2);
const errors = [];
const out = (k, v) => console.log(`${k}=${v}`);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  timeout: 60000,
  // The closed network here: no background connections to be refused.
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update',
    '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  page.setDefaultTimeout(20000);
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  await page.goto('file://' + path.resolve(svg));
  await page.screenshot({ path: 'shot.png' });

  const frame = (name) => page.evaluate((n) => {
    for (const g of document.querySelectorAll('#frames > g')) {
      const t = g.querySelector('title').textContent;
      if (t.slice(0, t.lastIndexOf(' (')) === n) {
        const r = g.querySelector('rect');
        const b = r.getBoundingClientRect();
        return { x: +r.getAttribute('x'), width: +r.getAttribute('width'),
          cls: g.getAttribute('class') || '', cx: b.x + b.width / 2, cy: b.y + b.height / 2,
          hidden: getComputedStyle(g).display === 'none' };
      }
    }
    return null;
  }, name);
  const text = (id) => page.evaluate((i) => document.getElementById(i).textContent, id);
  const highlighted = () => page.evaluate(() =>
    document.querySelectorAll('#frames rect[fill="#e600e6"]').length);

  out('frames', await page.evaluate(() => document.querySelectorAll('#frames > g').length));

  const f3 = await frame('f3');
  await page.mouse.move(f3.cx, f3.cy);
  out('hover', await text('details'));

  // Ctrl-F opens the search prompt; type the regex into it.
  page.once('dialog', (d) => d.accept(regex));
  await page.keyboard.press('Control+f');
  await page.waitForFunction(() => document.getElementById('matched').textContent.trim() !== '');
  out('search', await text('matched'));
  out('highlighted', await highlighted());
  await page.screenshot({ path: 'search.png' });

  const f2 = await frame('f2');
  await page.mouse.click(f2.cx, f2.cy);
  const z2 = await frame('f2'), z3 = await frame('f3');
  const zm = await frame('main'), zh = await frame('h');
  out('zoom_f2_width', z2.width);
  out('zoom_f3_width', z3.width);
  out('zoom_main_width', zm.width);
  out('zoom_main_class', zm.cls);
  out('zoom_h_hidden', zh.hidden);
  out('zoom_reset_shown', await page.evaluate(() =>
    getComputedStyle(document.getElementById('unzoom')).display !== 'none'));
  await page.mouse.move(0, 0);
  await page.screenshot({ path: 'zoom.png' });

  await page.click('#unzoom');
  const u3 = await frame('f3');
  out('unzoom_f3', `${u3.x} ${u3.width}`);

  await page.keyboard.press('Escape');
  out('cleared', `'${(await text('matched')).trim()}' ${await highlighted()}`);
} finally {
  await browser.close();
}
out('errors', errors.length ? errors.join(' | ') : 'none');
