// Builds DOM nodes. Text always goes in as text nodes: API data (client IDs, topics, payloads) is
// attacker-controlled, so nothing here ever parses a string as HTML.

/** h('button', {class: 'x', onclick: f}, 'text', childNode, [more]) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function message(kind, text) {
  return h('div', { class: 'msg ' + kind, role: kind === 'error' ? 'alert' : 'status' }, text);
}

export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toLocaleString();
}

export function bytes(n) {
  if (n === null || n === undefined) return '';
  if (n < 1024) return n + ' B';
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KiB';
  return (n / 1024 / 1024).toFixed(1) + ' MiB';
}

/** A table of items; a column is {title, value: item => text or node, num: true for numbers}. */
export function table(columns, items, empty = 'Nothing to show.') {
  if (!items.length) return h('p', { class: 'muted' }, empty);
  return h('table', {},
    h('thead', {}, h('tr', {}, columns.map(c => h('th', {}, c.title)))),
    h('tbody', {}, items.map(item => h('tr', {},
      columns.map(c => h('td', { class: c.num ? 'num' : null }, c.value(item)))))));
}

/**
 * A button that asks once more before doing something that cannot be undone: the first click
 * turns it into "Confirm …", the second runs the action (no modal dialogs).
 */
export function confirmButton(label, action, attrs = {}) {
  let armed = false;
  const b = h('button', { type: 'button', class: 'secondary', ...attrs }, label);
  b.addEventListener('click', async () => {
    if (!armed) {
      armed = true;
      b.textContent = 'Confirm ' + label.toLowerCase();
      b.className = 'danger';
      setTimeout(() => { if (armed && b.isConnected) { armed = false; b.textContent = label; b.className = 'secondary'; } }, 5000);
      return;
    }
    armed = false;
    b.disabled = true;
    try { await action(); } finally { b.disabled = false; }
  });
  return b;
}

export function field(labelText, input) {
  return h('label', {}, labelText, input);
}
