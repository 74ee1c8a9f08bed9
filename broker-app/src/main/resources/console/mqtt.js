// An MQTT client in the page (Eclipse Paho JS, MQTT 3.1.1 over WebSocket) that connects back to this
// node's own WebSocket listener: subscribe, publish, and watch what arrives.
import { h, fill, message, field } from './dom.js';

const MAX_SHOWN = 200;
let client = null; // kept across page visits, so a subscription survives looking at another page
const shown = h('div', { class: 'log', id: 'mqtt-messages' });
const state = h('div', { id: 'mqtt-state' });

async function defaults() {
  try {
    const r = await fetch('/console/config.json');
    const c = await r.json();
    // A page loaded over HTTPS may only open wss:// connections: the secure listener's port then.
    const port = location.protocol === 'https:' ? c.wssPort || c.wsPort : c.wsPort;
    return { port: port || 8084, path: c.wsPath || '/mqtt' };
  } catch {
    return { port: 8084, path: '/mqtt' };
  }
}

export function mqttPage() {
  const host = h('input', { name: 'host', value: location.hostname });
  const port = h('input', { name: 'port', type: 'number', min: 1, max: 65535, size: 6 });
  const path = h('input', { name: 'path', value: '/mqtt', size: 8 });
  const clientId = h('input', { name: 'clientId', value: 'console-' + Math.random().toString(16).slice(2, 10) });
  const username = h('input', { name: 'username', autocomplete: 'off' });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'off' });
  const connect = h('button', { type: 'submit', id: 'mqtt-connect' }, 'Connect');
  const disconnect = h('button', { type: 'button', class: 'secondary', id: 'mqtt-disconnect', onclick: () => client && client.disconnect() }, 'Disconnect');
  defaults().then(d => { if (!port.value) port.value = d.port; path.value = d.path; });

  const connectForm = h('form', { class: 'bar', id: 'mqtt-connect-form' }, field('Host', host), field('WebSocket port', port),
    field('Path', path), field('Client ID', clientId), field('User name', username), field('Password', password), connect, disconnect);
  connectForm.addEventListener('submit', e => {
    e.preventDefault();
    if (client && client.isConnected()) return;
    const c = new Paho.Client(host.value.trim(), Number(port.value), path.value.trim() || '/mqtt', clientId.value.trim());
    c.onConnectionLost = r => {
      setState(r.errorCode === 0 ? message('ok', 'Disconnected.') : message('error', 'Connection lost: ' + r.errorMessage));
    };
    c.onMessageArrived = m => show(m);
    const opts = {
      timeout: 10, cleanSession: true, mqttVersion: 4, useSSL: location.protocol === 'https:',
      onSuccess: () => { client = c; setState(message('ok', 'Connected as ' + c.clientId)); },
      onFailure: r => setState(message('error', 'Could not connect: ' + r.errorMessage)),
    };
    if (username.value) opts.userName = username.value;
    if (password.value) opts.password = password.value;
    setState(message('ok', 'Connecting…'));
    c.connect(opts);
  });

  const filter = h('input', { name: 'filter', value: '#' });
  const subQos = qosSelect('subQos');
  const subForm = h('form', { class: 'bar', id: 'mqtt-subscribe' }, field('Topic filter', filter), field('QoS', subQos),
    h('button', { type: 'submit' }, 'Subscribe'),
    h('button', { type: 'button', class: 'secondary', onclick: () => withClient(c => c.unsubscribe(filter.value, {
      onSuccess: () => setState(message('ok', 'Unsubscribed from ' + filter.value)) })) }, 'Unsubscribe'));
  subForm.addEventListener('submit', e => {
    e.preventDefault();
    const f = filter.value;
    withClient(c => c.subscribe(f, {
      qos: Number(subQos.value),
      onSuccess: r => setState(r.grantedQos && r.grantedQos[0] >= 0x80
        ? message('error', 'The broker refused the subscription to ' + f)
        : message('ok', 'Subscribed to ' + f)),
      onFailure: r => setState(message('error', 'Could not subscribe: ' + (r.errorMessage || r.errorCode))),
    }));
  });

  const topic = h('input', { name: 'topic', value: 'console/test' });
  const payload = h('textarea', { name: 'payload' });
  const pubQos = qosSelect('pubQos');
  const retain = h('input', { name: 'retain', type: 'checkbox' });
  const pubForm = h('form', { class: 'bar', id: 'mqtt-publish' }, field('Topic', topic), field('Payload', payload), field('QoS', pubQos),
    h('label', { class: 'check' }, retain, 'Retain'), h('button', { type: 'submit' }, 'Publish'));
  pubForm.addEventListener('submit', e => {
    e.preventDefault();
    withClient(c => {
      c.send(topic.value, payload.value, Number(pubQos.value), retain.checked);
      setState(message('ok', 'Published to ' + topic.value));
    });
  });

  const el = h('div', { class: 'page' }, h('h1', {}, 'MQTT client'),
    h('p', { class: 'muted' }, 'Connects from this browser to the node\'s MQTT WebSocket listener (MQTT 3.1.1); the credentials are an MQTT client\'s, not the console\'s.'),
    connectForm, state, h('h2', {}, 'Subscribe'), subForm, h('h2', {}, 'Publish'), pubForm,
    h('h2', {}, 'Messages received'),
    h('button', { type: 'button', class: 'secondary', onclick: () => fill(shown) }, 'Clear'), shown);
  return { el };
}

function qosSelect(name) {
  return h('select', { name }, [0, 1, 2].map(q => h('option', { value: q }, String(q))));
}

function withClient(action) {
  if (!client || !client.isConnected()) {
    setState(message('error', 'Connect first.'));
    return;
  }
  try { action(client); } catch (e) { setState(message('error', e.message)); }
}

function setState(node) {
  fill(state, node);
}

function show(m) {
  let text;
  try { text = m.payloadString; } catch { text = '(' + m.payloadBytes.length + ' bytes, not UTF-8)'; }
  const line = h('div', { class: 'mqtt-message' }, h('span', { class: 'topic mono' }, m.destinationName),
    h('span', { class: 'muted' }, `QoS ${m.qos}${m.retained ? ', retained' : ''} · `), h('span', { class: 'mono payload-text' }, text));
  shown.prepend(line);
  while (shown.childElementCount > MAX_SHOWN) shown.lastElementChild.remove();
}
