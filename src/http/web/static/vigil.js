// Progressive enhancement of Vigil's server-rendered pages: everything here is optional, every page
// reads and every form submits without it. Loaded as an ES module from /assets/ (the CSP allows no
// inline script). Its jobs: keyboard navigation of tables marked data-keynav, "select all"
// checkboxes, live refresh of regions marked data-live, and the hunt page's field completion,
// histogram drag and saved queries.

let stopLive = () => {};

const typing = (el) => el instanceof HTMLElement && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));

/** Keyboard navigation: j/k (or arrows) move, x selects the row's checkbox, enter (or o) opens it, / finds. */
function keyboardNavigation() {
  const table = document.querySelector('table[data-keynav]');
  if (!table) return;
  const rows = () => [...table.querySelectorAll('tbody tr')];
  let index = -1;
  const move = (to) => {
    const all = rows();
    if (all.length === 0) return;
    index = Math.max(0, Math.min(all.length - 1, to));
    for (const r of all) r.classList.remove('kn-current');
    const row = all[index];
    row.classList.add('kn-current');
    row.setAttribute('tabindex', '-1');
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: 'nearest' });
  };
  document.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || typing(e.target)) return;
    const row = rows()[index];
    if (e.key === 'j' || e.key === 'ArrowDown') { move(index + 1); e.preventDefault(); }
    else if (e.key === 'k' || e.key === 'ArrowUp') { move(index - 1); e.preventDefault(); }
    else if (e.key === 'x' && row) {
      const box = row.querySelector('input[type=checkbox]');
      if (box) { box.checked = !box.checked; box.dispatchEvent(new Event('change', { bubbles: true })); }
      e.preventDefault();
    } else if ((e.key === 'Enter' || e.key === 'o') && row && row.dataset.href) { location.assign(row.dataset.href); e.preventDefault(); }
    else if (e.key === '/') {
      const search = document.querySelector('form[role=search] input');
      if (search) { search.focus(); e.preventDefault(); }
    }
  });
  table.addEventListener('click', (e) => {
    const row = e.target instanceof Element ? e.target.closest('tbody tr') : null;
    if (row) index = rows().indexOf(row);
  });
}

/** "Select all" checkboxes: data-select-all="name" toggles every checkbox of that name. */
function selectAll() {
  for (const box of document.querySelectorAll('input[data-select-all]')) {
    box.addEventListener('change', () => {
      for (const b of document.querySelectorAll(`input[type=checkbox][name="${box.dataset.selectAll}"]`)) b.checked = box.checked;
    });
  }
}

/**
 * Live regions: data-live="seconds" re-fetches this page (or the same-origin path in data-live-src)
 * and swaps the region's content with the element of the same id when it changed.
 */
function liveRegions() {
  const regions = [...document.querySelectorAll('[data-live][id]')];
  if (regions.length === 0) return;
  const seconds = Math.max(2, Math.min(300, Number(regions[0].dataset.live) || 10));
  const refresh = async () => {
    if (document.hidden || regions.some((r) => r.contains(document.activeElement) && typing(document.activeElement))) return;
    try {
      // Regions that name a source (data-live-src, a same-origin path) fetch it; the others re-fetch this page.
      const sources = new Map();
      for (const region of regions) {
        const src = region.dataset.liveSrc && region.dataset.liveSrc.startsWith('/') && !region.dataset.liveSrc.startsWith('//') ? region.dataset.liveSrc : location.href;
        if (!sources.has(src)) sources.set(src, []);
        sources.get(src).push(region);
      }
      for (const [src, group] of sources) {
        const response = await fetch(src, { credentials: 'same-origin', headers: { accept: 'text/html' } });
        // Sent elsewhere (the session ended: the sign-in page) or refused: stop asking, so an
        // unattended tab does not count failed authentications against its address.
        if (response.redirected || !response.ok) { stopLive(); return; }
        const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
        for (const region of group) {
          const next = fresh.getElementById(region.id);
          if (next && next.innerHTML !== region.innerHTML) region.innerHTML = next.innerHTML;
        }
      }
      document.documentElement.dataset.liveAt = new Date().toISOString();
    } catch {
      // A failed refresh leaves the page as it was; the next one tries again.
    }
  };
  const timer = setInterval(refresh, seconds * 1000);
  stopLive = () => clearInterval(timer);
}

/**
 * Field completion of inputs marked data-complete="<datalist id>": the word before the caret is
 * completed from the list's options (a field of a filter gets its ":"; one after a pipe's `by`,
 * `top N`, `fields` or `sort` does not). Arrows choose, Tab or Enter takes, Escape closes.
 */
function fieldCompletion() {
  for (const input of document.querySelectorAll('input[data-complete]')) {
    const list = document.getElementById(input.dataset.complete);
    if (!list) continue;
    const fields = [...list.querySelectorAll('option')].map((o) => o.value);
    const menu = document.createElement('ul');
    menu.className = 'completer';
    menu.setAttribute('role', 'listbox');
    menu.hidden = true;
    input.insertAdjacentElement('afterend', menu);
    let chosen = 0;
    let shown = [];
    const word = () => {
      const before = input.value.slice(0, input.selectionStart ?? input.value.length);
      const m = /[\w.@-]*$/.exec(before);
      return { before, start: before.length - m[0].length, text: m[0] };
    };
    const close = () => { menu.hidden = true; shown = []; };
    const draw = () => {
      menu.replaceChildren(...shown.map((f, i) => {
        const li = document.createElement('li');
        li.textContent = f;
        li.setAttribute('role', 'option');
        li.setAttribute('aria-selected', String(i === chosen));
        li.addEventListener('mousedown', (e) => { e.preventDefault(); take(f); });
        return li;
      }));
      menu.hidden = shown.length === 0;
    };
    const take = (field) => {
      const { before, start } = word();
      const inPipe = /(\bby|\btop\s+\d+|\bfields|\bsort)\s+-?([\w.@-]+\s*,\s*-?)*$/.test(before.slice(0, start)) || /\|[^|]*\bby\s+[^|]*,\s*$/.test(before.slice(0, start));
      const insert = field + (inPipe ? ' ' : ':');
      const after = input.value.slice(before.length).replace(/^[\w.@-]*/, '');
      input.value = before.slice(0, start) + insert + after;
      const caret = start + insert.length;
      input.setSelectionRange(caret, caret);
      close();
    };
    input.addEventListener('input', () => {
      const { text, before } = word();
      // No completion inside a quoted phrase or right after a field's colon.
      if (text === '' || (before.split('"').length - 1) % 2 === 1) return close();
      shown = fields.filter((f) => f.startsWith(text) && f !== text).slice(0, 8);
      chosen = 0;
      draw();
    });
    input.addEventListener('keydown', (e) => {
      if (menu.hidden) return;
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        chosen = (chosen + (e.key === 'ArrowDown' ? 1 : shown.length - 1)) % shown.length;
        draw();
        e.preventDefault();
      } else if (e.key === 'Tab' || e.key === 'Enter') { take(shown[chosen]); e.preventDefault(); }
      else if (e.key === 'Escape') { close(); e.preventDefault(); }
    });
    input.addEventListener('blur', close);
  }
}

/**
 * Histograms marked data-histogram: a drag across the plot narrows the hunt to the range dragged
 * over (the form's since/until, then it submits). A click without a drag follows the bar's link.
 */
function histogramZoom() {
  const form = document.getElementById('hunt-form');
  for (const svg of document.querySelectorAll('svg[data-histogram]')) {
    const since = Date.parse(svg.dataset.since);
    const until = Date.parse(svg.dataset.until);
    const left = Number(svg.dataset.left);
    const right = Number(svg.dataset.right);
    const brush = svg.querySelector('.brush');
    const xOf = (e) => {
      const box = svg.getBoundingClientRect();
      const x = ((e.clientX - box.left) * svg.viewBox.baseVal.width) / box.width;
      return Math.max(left, Math.min(right, x));
    };
    const timeOf = (x) => new Date(Math.round((since + ((x - left) / (right - left)) * (until - since)) / 1000) * 1000);
    let start;
    let dragged = false;
    svg.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      start = xOf(e);
      dragged = false;
      svg.setPointerCapture(e.pointerId);
      e.preventDefault();
    });
    svg.addEventListener('pointermove', (e) => {
      if (start === undefined) return;
      const x = xOf(e);
      if (Math.abs(x - start) >= 3) dragged = true;
      brush.setAttribute('x', String(Math.min(x, start)));
      brush.setAttribute('width', String(Math.abs(x - start)));
    });
    svg.addEventListener('pointerup', (e) => {
      if (start === undefined) return;
      const [a, b] = [start, xOf(e)].sort((p, q) => p - q);
      start = undefined;
      if (!dragged || !form) return;
      form.elements.range.value = 'custom';
      form.elements.since.value = timeOf(a).toISOString().replace('.000Z', 'Z');
      form.elements.until.value = timeOf(b).toISOString().replace('.000Z', 'Z');
      form.requestSubmit();
    });
    // A drag that ends over a bar is not a click on its link.
    svg.addEventListener('click', (e) => { if (dragged) { e.preventDefault(); dragged = false; } }, true);
  }
  // Typing a time means a range of one's own.
  if (form) for (const name of ['since', 'until']) {
    form.elements[name]?.addEventListener('input', () => { form.elements.range.value = 'custom'; });
  }
}

/** Saved hunts, kept in this browser's localStorage (never on the server): a list of {name, q} links. */
function savedQueries() {
  const section = document.querySelector('[data-saved-queries]');
  const input = document.getElementById('hunt-q');
  if (!section || !input) return;
  const KEY = 'vigil.hunt.saved';
  const load = () => { try { const x = JSON.parse(localStorage.getItem(KEY) ?? '[]'); return Array.isArray(x) ? x : []; } catch { return []; } };
  const store = (list) => localStorage.setItem(KEY, JSON.stringify(list.slice(0, 100)));
  const list = document.getElementById('saved-list');
  const draw = () => {
    list.replaceChildren(...load().map((s, i) => {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = `/hunt?${new URLSearchParams({ q: String(s.q) })}`;
      a.textContent = String(s.name);
      a.title = String(s.q);
      const drop = document.createElement('button');
      drop.type = 'button';
      drop.className = 'link';
      drop.textContent = 'remove';
      drop.addEventListener('click', () => { const all = load(); all.splice(i, 1); store(all); draw(); });
      li.append(a, ' ', drop);
      return li;
    }));
  };
  document.getElementById('save-button').addEventListener('click', () => {
    const q = input.value.trim();
    if (q === '') return;
    const name = document.getElementById('save-name').value.trim() || q.slice(0, 80);
    store([{ name, q }, ...load().filter((s) => s.name !== name)]);
    document.getElementById('save-name').value = '';
    draw();
  });
  section.hidden = false;
  draw();
}

keyboardNavigation();
selectAll();
liveRegions();
fieldCompletion();
histogramZoom();
savedQueries();
