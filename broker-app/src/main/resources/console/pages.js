// The list pages over the admin API: retained messages, credentials, blocked clients, refused
// connections, dropped messages and cluster nodes.
import { h, fill, message, when, bytes, confirmButton, field } from './dom.js';
import { get, post, del, query, segment } from './api.js';
import { pagedList } from './list.js';

function page(title, ...children) {
  return h('div', { class: 'page' }, h('h1', {}, title), children);
}

function lines(text) {
  return text.split('\n').map(s => s.trim()).filter(s => s.length);
}

function payloadText(m) {
  if (m.payloadOmitted) return `(${bytes(m.payloadSize)}, not listed)`;
  if (m.payload === null || m.payload === undefined) return '';
  return m.encoding === 'base64' ? 'base64: ' + m.payload : m.payload;
}

export function retainedPage() {
  const status = h('div');
  const detail = h('div');
  const list = pagedList({
    filters: [{ name: 'filter', label: 'Topic filter', value: '#' }],
    load: p => get('/retained' + query({ ...p, filter: p.filter || '#' })),
    empty: 'No retained messages match.',
    columns: [
      { title: 'Topic', value: m => h('span', { class: 'mono' }, m.topic) },
      { title: 'QoS', value: m => m.qos, num: true },
      { title: 'Size', value: m => bytes(m.payloadSize), num: true },
      { title: 'Payload', value: m => h('span', { class: 'mono' }, abbreviate(payloadText(m), 80)) },
      { title: 'Publisher', value: m => m.publisherId || '' },
      { title: 'Stored', value: m => when(m.storedAt) },
      { title: '', value: m => h('span', { class: 'bar' },
        h('button', { type: 'button', class: 'secondary', onclick: () => show(m.topic) }, 'View'),
        confirmButton('Delete', async () => {
          try {
            await del('/retained/' + segment(m.topic));
            fill(status, message('ok', 'Deleted the retained message of ' + m.topic));
            fill(detail);
            list.reload();
          } catch (e) { fill(status, message('error', e.message)); }
        }, { 'data-topic': m.topic })) },
    ],
  });

  async function show(topic) {
    try {
      const m = await get('/retained/' + segment(topic));
      const p = m.properties || {};
      fill(detail, h('div', { class: 'detail' }, h('h2', {}, m.topic), h('dl', {},
        h('dt', {}, 'QoS'), h('dd', {}, m.qos),
        h('dt', {}, 'Size'), h('dd', {}, bytes(m.payloadSize)),
        h('dt', {}, 'Encoding'), h('dd', {}, m.encoding),
        h('dt', {}, 'Publisher'), h('dd', {}, m.publisherId || ''),
        h('dt', {}, 'Stored'), h('dd', {}, when(m.storedAt)),
        h('dt', {}, 'Content type'), h('dd', {}, p.contentType || ''),
        h('dt', {}, 'Expires in'), h('dd', {}, p.messageExpiryInterval == null ? 'never' : p.messageExpiryInterval + ' s'),
        h('dt', {}, 'Response topic'), h('dd', {}, p.responseTopic || ''),
        h('dt', {}, 'User properties'), h('dd', {}, (p.userProperties || []).map(u => u.name + '=' + u.value).join(', '))),
        h('pre', { class: 'payload' }, m.payload == null ? '' : m.payload)));
    } catch (e) { fill(status, message('error', e.message)); }
  }

  list.reload();
  return { el: page('Retained messages', status, list.el, detail) };
}

function abbreviate(s, n) {
  s = String(s);
  return s.length <= n ? s : s.slice(0, n) + '…';
}

export function credentialsPage() {
  const status = h('div');
  const list = pagedList({
    filters: [{ name: 'text', label: 'User name, client ID or common name contains' }],
    load: p => get('/credentials' + query(p)),
    empty: 'No credentials.',
    columns: [
      { title: 'Type', value: c => c.type },
      { title: 'User name', value: c => h('span', { class: 'mono' }, c.username || c.certCommonName || '') },
      { title: 'Client ID', value: c => h('span', { class: 'mono' }, c.clientId || 'any') },
      { title: 'Client type', value: c => c.clientType || '' },
      { title: 'May publish', value: c => rules(c.publish) },
      { title: 'May subscribe', value: c => rules(c.subscribe) },
      { title: 'Created', value: c => when(c.createdAt) },
      { title: '', value: c => confirmButton('Delete', async () => {
        try {
          await del('/credentials/' + segment(c.id));
          fill(status, message('ok', 'Deleted the credential of ' + (c.username || c.certCommonName)));
          list.reload();
        } catch (e) { fill(status, message('error', e.message)); }
      }, { 'data-username': c.username || '' }) },
    ],
  });

  const username = h('input', { name: 'username', required: true, autocomplete: 'off' });
  const password = h('input', { name: 'password', type: 'password', required: true, autocomplete: 'new-password' });
  const clientId = h('input', { name: 'clientId', placeholder: 'any', autocomplete: 'off' });
  const clientType = h('select', { name: 'clientType' },
    h('option', { value: '' }, 'default'), h('option', { value: 'DEVICE' }, 'DEVICE'),
    h('option', { value: 'APPLICATION' }, 'APPLICATION'));
  const publish = h('textarea', { name: 'publish', placeholder: 'devices/${clientid}/telemetry' });
  const subscribe = h('textarea', { name: 'subscribe', placeholder: 'devices/${clientid}/commands' });
  const form = h('form', { class: 'bar', id: 'create-credential' },
    field('User name', username), field('Password', password), field('Client ID', clientId),
    field('Client type', clientType), field('May publish to (one filter a line)', publish),
    field('May subscribe to (one filter a line)', subscribe), h('button', { type: 'submit' }, 'Create'));
  form.addEventListener('submit', async e => {
    e.preventDefault();
    try {
      await post('/credentials', {
        type: 'basic', username: username.value.trim(), password: password.value,
        clientId: clientId.value.trim() || null, clientType: clientType.value || null,
        publish: lines(publish.value), subscribe: lines(subscribe.value),
      });
      fill(status, message('ok', 'Created the credential of ' + username.value.trim()));
      form.reset();
      list.reload();
    } catch (err) { fill(status, message('error', err.message)); }
  });

  list.reload();
  return { el: page('Credentials', h('h2', {}, 'New basic credential'), form, status, h('h2', {}, 'Credentials'), list.el) };
}

function rules(list) {
  if (!list || !list.length) return h('span', { class: 'muted' }, 'nothing');
  return h('span', { class: 'mono' }, list.join(', '));
}

export function blockedPage() {
  const status = h('div');
  const list = pagedList({
    filters: [{ name: 'type', label: 'Type', options: [['', 'all'], ['client_id', 'client ID'], ['username', 'user name'], ['ip', 'IP address'], ['regex', 'regular expression']] }],
    load: p => get('/blocked' + query(p)),
    empty: 'No client is blocked.',
    columns: [
      { title: 'Type', value: b => b.type + (b.target ? ' (' + b.target + ')' : '') },
      { title: 'Value', value: b => h('span', { class: 'mono' }, b.value) },
      { title: 'Until', value: b => b.expiresAt ? when(b.expiresAt) + (b.expired ? ' (over)' : '') : 'always' },
      { title: 'Since', value: b => when(b.createdAt) },
      { title: '', value: b => confirmButton('Remove', async () => {
        try {
          await del('/blocked/' + segment(b.id));
          fill(status, message('ok', 'Removed the block of ' + b.value));
          list.reload();
        } catch (e) { fill(status, message('error', e.message)); }
      }) },
    ],
  });
  const type = h('select', { name: 'type' }, h('option', { value: 'client_id' }, 'client ID'),
    h('option', { value: 'username' }, 'user name'), h('option', { value: 'ip' }, 'IP address or CIDR range'),
    h('option', { value: 'regex' }, 'regular expression'));
  const value = h('input', { name: 'value', required: true, autocomplete: 'off' });
  const target = h('select', { name: 'target' }, h('option', { value: 'client_id' }, 'client ID'),
    h('option', { value: 'username' }, 'user name'), h('option', { value: 'ip' }, 'IP address'));
  const targetField = field('Regex matches', target);
  targetField.hidden = true;
  type.addEventListener('change', () => { targetField.hidden = type.value !== 'regex'; });
  const until = h('input', { name: 'expiresAt', type: 'datetime-local' });
  const form = h('form', { class: 'bar', id: 'add-block' }, field('Block by', type), field('Value', value), targetField,
    field('Until (empty: always)', until), h('button', { type: 'submit' }, 'Block'));
  form.addEventListener('submit', async e => {
    e.preventDefault();
    try {
      await post('/blocked', {
        type: type.value, value: value.value.trim(), target: type.value === 'regex' ? target.value : null,
        expiresAt: until.value ? new Date(until.value).toISOString() : null,
      });
      fill(status, message('ok', 'Blocked ' + value.value.trim()));
      form.reset();
      targetField.hidden = true;
      list.reload();
    } catch (err) { fill(status, message('error', err.message)); }
  });
  list.reload();
  return { el: page('Blocked clients', form, status, list.el) };
}

const REFUSAL_REASONS = ['', 'bad_credentials', 'not_authorized', 'blocked', 'anonymous_refused', 'auth_unavailable', 'auth_busy', 'bad_auth_method'];

export function refusedPage() {
  const list = pagedList({
    filters: [{ name: 'clientId', label: 'Client ID' }, { name: 'username', label: 'User name' },
      { name: 'address', label: 'Address' }, { name: 'reason', label: 'Reason', options: REFUSAL_REASONS.map(r => [r, r || 'any']) }],
    load: p => get('/refused-connections' + query(p)),
    empty: 'No refused connections.',
    columns: [
      { title: 'Client ID', value: r => h('span', { class: 'mono' }, r.clientId) },
      { title: 'User name', value: r => h('span', { class: 'mono' }, r.username || '') },
      { title: 'Address', value: r => r.address || '' },
      { title: 'Reason', value: r => r.reason },
      { title: 'Password', value: r => r.passwordGiven ? 'given' : 'none' },
      { title: 'TLS', value: r => r.tls ? 'yes' : 'no' },
      { title: 'Times', value: r => r.count, num: true },
      { title: 'First', value: r => when(r.firstAt) },
      { title: 'Latest', value: r => when(r.lastAt) },
    ],
  });
  list.reload();
  return { el: page('Refused connections', list.el) };
}

const DROP_REASONS = ['', 'expired', 'qos0_queue_full', 'client_offline_qos0', 'session_queue_full', 'packet_too_large',
  'publish_not_stored', 'no_session', 'session_ended', 'session_moved', 'node_down', 'delivery_failed',
  'malformed_record', 'not_authorized'];

export function droppedPage() {
  const list = pagedList({
    pageParam: 'limit',
    pageSize: 50,
    filters: [{ name: 'reason', label: 'Reason', options: DROP_REASONS.map(r => [r, r || 'any']) },
      { name: 'clientId', label: 'Client ID contains' }, { name: 'node', label: 'Node' }],
    load: p => get('/dropped' + query(p)),
    empty: 'No dropped messages kept.',
    columns: [
      { title: 'Time', value: d => when(d.time) },
      { title: 'Node', value: d => d.node },
      { title: 'Reason', value: d => d.reason },
      { title: 'Client ID', value: d => h('span', { class: 'mono' }, d.clientId || '') },
      { title: 'Topic', value: d => h('span', { class: 'mono' }, d.topic || '') },
    ],
    after: data => {
      const counts = Object.entries((data.counts && data.counts.total) || {}).sort((a, b) => b[1] - a[1]);
      return [h('h2', {}, 'Counts since each node started'),
        counts.length ? h('table', {}, h('tbody', {}, counts.map(([reason, n]) =>
          h('tr', {}, h('td', {}, reason), h('td', { class: 'num' }, n))))) : h('p', { class: 'muted' }, 'None.')];
    },
  });
  list.reload();
  return { el: page('Dropped messages', list.el) };
}

export function nodesPage() {
  const status = h('div');
  const list = pagedList({
    load: p => get('/cluster/nodes' + query(p)),
    columns: [
      { title: 'Node', value: n => n.nodeId + (n.self ? ' (this node)' : '') },
      { title: 'State', value: n => h('span', { class: 'state-' + n.state }, n.state) },
      { title: 'Address', value: n => n.address || '' },
      { title: 'Version', value: n => n.version || '' },
      { title: 'Connected', value: n => n.connectedSessions ?? '', num: true },
      { title: 'Started', value: n => when(n.startedAt) },
      { title: 'Last heartbeat', value: n => when(n.lastHeartbeat) },
      { title: '', value: n => n.state === 'draining'
        ? h('button', { type: 'button', class: 'secondary', onclick: () => act(n, 'undrain') }, 'Undrain')
        : n.state === 'serving' ? confirmButton('Drain', () => act(n, 'drain')) : '' },
    ],
  });
  async function act(n, what) {
    try {
      await post('/cluster/nodes/' + segment(n.nodeId) + '/' + what);
      fill(status, message('ok', (what === 'drain' ? 'Draining ' : 'Undrained ') + n.nodeId));
      list.reload();
    } catch (e) { fill(status, message('error', e.message)); }
  }
  list.reload();
  const timer = setInterval(() => list.reload(), 5000);
  return { el: page('Cluster nodes', status, list.el), leave: () => clearInterval(timer) };
}
