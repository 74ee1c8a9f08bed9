// A server-side paged, filtered list: the page asks the API for one page at a time, so a list of
// 100,000 sessions costs the browser no more than a list of ten.
import { h, fill, table, message } from './dom.js';

/**
 * @param opts.filters  [{name, label, options?: [[value, text]], placeholder?}]
 * @param opts.load     (params with page, pageSize and the filters) => Promise of {items, total, page, pageSize}
 * @param opts.columns  see table()
 * @param opts.pageParam name of the page size parameter ('pageSize'; the dropped list calls it 'limit')
 */
export function pagedList(opts) {
  const pageSize = opts.pageSize || 20;
  let page = 0;
  const inputs = {};
  const filterBar = h('form', { class: 'bar', role: 'search' },
    (opts.filters || []).map(f => {
      const input = f.options
        ? h('select', { name: f.name }, f.options.map(([v, t]) => h('option', { value: v }, t)))
        : h('input', { name: f.name, type: 'text', placeholder: f.placeholder || '', value: f.value || '' });
      inputs[f.name] = input;
      return h('label', {}, f.label, input);
    }),
    (opts.filters || []).length ? h('button', { type: 'submit' }, 'Search') : null,
    h('button', { type: 'button', class: 'secondary', onclick: () => load() }, 'Refresh'));
  filterBar.addEventListener('submit', e => { e.preventDefault(); page = 0; load(); });
  const status = h('div');
  const body = h('div', { class: 'list-body' });
  const info = h('span', { class: 'muted' });
  const prev = h('button', { type: 'button', class: 'secondary', onclick: () => { page--; load(); } }, 'Previous');
  const next = h('button', { type: 'button', class: 'secondary', onclick: () => { page++; load(); } }, 'Next');
  const pager = h('div', { class: 'pager' }, prev, info, next);
  const extra = h('div');

  async function load() {
    const params = { page, [opts.pageParam || 'pageSize']: pageSize };
    for (const [k, input] of Object.entries(inputs)) params[k] = input.value.trim();
    try {
      const data = await opts.load(params);
      fill(status);
      fill(body, table(opts.columns, data.items, opts.empty));
      const pages = Math.max(1, Math.ceil(data.total / pageSize));
      info.textContent = `Page ${page + 1} of ${pages} · ${data.total} in all`;
      prev.disabled = page <= 0;
      next.disabled = page + 1 >= pages;
      if (opts.after) fill(extra, opts.after(data));
    } catch (e) {
      fill(status, message('error', e.message));
    }
  }

  const el = h('section', {}, filterBar, status, body, pager, extra);
  return { el, reload: load, inputs };
}
