// The dashboard: the cluster's nodes and live charts of /api/v1/stats (uPlot, from its WebJar).
import { h, fill, message, when } from './dom.js';
import { get, query } from './api.js';

const REFRESH_MS = 5000;

const CHARTS = [
  { id: 'chart-messages', title: 'Messages per second', series: [
    { label: 'in', stroke: '#1f77b4', value: (s, iv) => s.messagesIn / iv },
    { label: 'out', stroke: '#2ca02c', value: (s, iv) => s.messagesOut / iv }] },
  { id: 'chart-drops', title: 'Dropped messages per interval', series: [
    { label: 'dropped', stroke: '#d62728', value: s => s.dropped }] },
  { id: 'chart-connections', title: 'Connections and sessions', series: [
    { label: 'connections', stroke: '#9467bd', value: s => s.connections },
    { label: 'sessions', stroke: '#8c564b', value: s => s.sessions }] },
];

export function dashboardPage() {
  const status = h('div');
  const nodes = h('div', { class: 'cards', id: 'nodes' });
  const boxes = CHARTS.map(c => h('div', { class: 'chart', id: c.id }, h('h2', {}, c.title)));
  const updated = h('p', { class: 'muted' });
  const plots = new Map();

  async function refresh() {
    try {
      const [list, stats] = await Promise.all([get('/cluster/nodes' + query({ pageSize: 100 })), get('/stats')]);
      fill(status);
      fill(nodes, list.items.map(n => h('div', { class: 'card' },
        h('div', { class: 'title' }, n.nodeId + (n.self ? ' (this node)' : '')),
        h('div', { class: 'state-' + n.state }, n.state),
        h('div', { class: 'muted' }, (n.connectedSessions ?? '?') + ' connected · ' + (n.version || 'dev')))),
        list.total > list.items.length ? h('div', { class: 'card muted' }, `and ${list.total - list.items.length} more`) : null);
      draw(stats);
      updated.textContent = 'Updated ' + when(new Date().toISOString()) + ', every ' + REFRESH_MS / 1000 + ' s';
    } catch (e) {
      fill(status, message('error', e.message));
    }
  }

  function draw(stats) {
    const samples = stats.total || [];
    const iv = stats.intervalSeconds || 1;
    const xs = samples.map(s => Date.parse(s.time) / 1000);
    CHARTS.forEach((c, i) => {
      const data = [xs, ...c.series.map(se => samples.map(s => se.value(s, iv)))];
      let plot = plots.get(c.id);
      if (!plot) {
        if (!boxes[i].isConnected) return;
        plot = new uPlot({
          width: Math.max(300, boxes[i].clientWidth - 20), height: 200,
          scales: { x: { time: true } },
          series: [{}, ...c.series.map(se => ({ label: se.label, stroke: se.stroke, width: 2 }))],
          axes: [{}, { size: 60 }],
        }, data, boxes[i]);
        plots.set(c.id, plot);
      } else {
        plot.setData(data);
      }
    });
  }

  refresh();
  const timer = setInterval(refresh, REFRESH_MS);
  const el = h('div', { class: 'page' }, h('h1', {}, 'Dashboard'), status, h('h2', {}, 'Nodes'), nodes,
    h('div', { class: 'charts' }, boxes), updated);
  return { el, leave: () => { clearInterval(timer); plots.forEach(p => p.destroy()); } };
}
