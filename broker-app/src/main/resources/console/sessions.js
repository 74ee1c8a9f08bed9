// Sessions and subscriptions of the whole cluster, searched and paged by the node (never loaded
// all at once: a cluster may hold 100,000 sessions or more).
import { h, fill, message, when, confirmButton } from './dom.js';
import { get, post, del, query, segment } from './api.js';
import { pagedList } from './list.js';

const never = 4294967295;

export function sessionsPage() {
  const status = h('div');
  const detail = h('div', { id: 'session-detail' });
  const list = pagedList({
    filters: [
      { name: 'clientIdPrefix', label: 'Client ID starts with' },
      { name: 'connected', label: 'Connected', options: [['', 'any'], ['true', 'connected'], ['false', 'offline']] },
      { name: 'clientType', label: 'Client type', options: [['', 'any'], ['DEVICE', 'DEVICE'], ['APPLICATION', 'APPLICATION']] },
      { name: 'username', label: 'User name' },
      { name: 'address', label: 'Address starts with' },
      { name: 'node', label: 'Node' },
    ],
    load: p => get('/sessions' + query(p)),
    empty: 'No sessions match.',
    columns: [
      { title: 'Client ID', value: s => h('button', { type: 'button', class: 'link mono', 'data-client-id': s.clientId, onclick: () => show(s.clientId) }, s.clientId) },
      { title: 'State', value: s => s.connected ? 'connected' : 'offline' },
      { title: 'Node', value: s => s.node || '' },
      { title: 'Address', value: s => s.address || '' },
      { title: 'User name', value: s => h('span', { class: 'mono' }, s.username || '') },
      { title: 'Type', value: s => s.clientType || '' },
      { title: 'MQTT', value: s => s.protocol || '' },
      { title: 'Since', value: s => when(s.connected ? s.connectedAt : s.disconnectedAt) },
    ],
  });

  async function show(clientId) {
    try {
      const s = await get('/sessions/' + segment(clientId));
      const actions = h('div', { class: 'bar' },
        s.connected ? confirmButton('Disconnect', () => act(s, 'disconnect'), { id: 'session-disconnect' }) : null,
        confirmButton('End session', () => act(s, 'end'), { id: 'session-end' }),
        h('button', { type: 'button', class: 'secondary', onclick: () => show(clientId) }, 'Reload'));
      fill(detail, h('div', { class: 'detail' }, h('h2', {}, 'Session ', h('span', { class: 'mono' }, s.clientId)),
        h('dl', {},
          row('State', s.connected ? 'connected' : 'offline'),
          row('Node', (s.node || '') + (s.nodeAlive === false ? ' (gone)' : '')),
          row('Address', s.address || ''),
          row('User name', s.username || ''),
          row('Client type', s.clientType || ''),
          row('Protocol', s.protocol || ''),
          row('Connected at', when(s.connectedAt)),
          row('Disconnected at', when(s.disconnectedAt)),
          row('Keep alive', s.keepAliveSeconds == null ? '' : s.keepAliveSeconds + ' s'),
          row('Persistent', s.persistent ? 'yes' : 'no'),
          row('Session expiry', s.sessionExpirySeconds === never ? 'never' : s.sessionExpirySeconds == null ? '' : s.sessionExpirySeconds + ' s'),
          row('Ends at', when(s.expiresAt)),
          row('Queued (Redis)', s.queuedMessages ?? ''),
          row('Backlog lag', s.backlogLag ?? ''),
          row('In flight', s.inFlight ?? (s.inFlightKnownOn ? 'known on ' + s.inFlightKnownOn : '')),
          row('Queued in memory', s.queuedInMemory ?? ''),
          row('Will', s.will ? `${s.will.topic} (QoS ${s.will.qos}${s.will.retain ? ', retained' : ''}, ${s.will.payloadBytes} bytes, delay ${s.will.delaySeconds} s)` : 'none')),
        h('h2', {}, 'Subscriptions'), subscriptionTable(s.subscriptions || []), actions));
    } catch (e) { fill(status, message('error', e.message)); }
  }

  async function act(s, what) {
    try {
      if (what === 'disconnect') {
        await post('/sessions/' + segment(s.clientId) + '/disconnect');
        fill(status, message('ok', 'Disconnected ' + s.clientId));
      } else {
        await del('/sessions/' + segment(s.clientId));
        fill(status, message('ok', 'Ended the session of ' + s.clientId));
        fill(detail);
      }
      list.reload();
    } catch (e) { fill(status, message('error', e.message)); }
  }

  list.reload();
  return { el: h('div', { class: 'page' }, h('h1', {}, 'Sessions'), list.el, status, detail) };
}

function row(name, value) {
  return [h('dt', {}, name), h('dd', {}, value)];
}

const subscriptionColumns = [
  { title: 'Client ID', value: s => h('span', { class: 'mono' }, s.clientId) },
  { title: 'Topic filter', value: s => h('span', { class: 'mono' }, (s.sharedGroup ? '$share/' + s.sharedGroup + '/' : '') + s.topicFilter) },
  { title: 'QoS', value: s => s.qos, num: true },
  { title: 'Options', value: s => options(s.options || {}) },
  { title: 'Node', value: s => s.node || '' },
];

function options(o) {
  const parts = [];
  if (o.noLocal) parts.push('no local');
  if (o.retainAsPublished) parts.push('retain as published');
  if (o.retainHandling) parts.push('retain handling ' + o.retainHandling);
  if (o.subscriptionIdentifier != null) parts.push('id ' + o.subscriptionIdentifier);
  return parts.join(', ');
}

function subscriptionTable(items) {
  return h('table', {}, h('thead', {}, h('tr', {}, subscriptionColumns.map(c => h('th', {}, c.title)))),
    h('tbody', {}, items.length ? items.map(s => h('tr', {}, subscriptionColumns.map(c => h('td', {}, c.value(s)))))
      : h('tr', {}, h('td', { colspan: subscriptionColumns.length, class: 'muted' }, 'No subscriptions.'))));
}

export function subscriptionsPage() {
  const list = pagedList({
    filters: [{ name: 'filter', label: 'Topic filter contains' }, { name: 'clientId', label: 'Client ID (exact)' }],
    load: p => get('/subscriptions' + query(p)),
    empty: 'No subscriptions match.',
    columns: subscriptionColumns,
  });
  list.reload();
  return { el: h('div', { class: 'page' }, h('h1', {}, 'Subscriptions'), list.el) };
}
