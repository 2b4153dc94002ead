// Progressive enhancement of Vigil's server-rendered pages: everything here is optional, every page
// reads and every form submits without it. Loaded as an ES module from /assets/ (the CSP allows no
// inline script). Three jobs: keyboard navigation of tables marked data-keynav, "select all"
// checkboxes, and live refresh of regions marked data-live.

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

keyboardNavigation();
selectAll();
liveRegions();
