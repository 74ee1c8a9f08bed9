// The console's shell: log in, the navigation, and one page at a time from the URL's fragment.
import { h, fill, message } from './dom.js';
import { post, token, setToken } from './api.js';
import { dashboardPage } from './dashboard.js';
import { sessionsPage, subscriptionsPage } from './sessions.js';
import { retainedPage, credentialsPage, blockedPage, refusedPage, droppedPage, nodesPage } from './pages.js';
import { mqttPage } from './mqtt.js';

const pages = {
  dashboard: dashboardPage,
  sessions: sessionsPage,
  subscriptions: subscriptionsPage,
  retained: retainedPage,
  credentials: credentialsPage,
  blocked: blockedPage,
  refused: refusedPage,
  dropped: droppedPage,
  nodes: nodesPage,
  mqtt: mqttPage,
};

const view = document.getElementById('view');
const nav = document.getElementById('nav');
const logout = document.getElementById('logout');
/** What the page shown asks to be done when it is left: stop timers, close connections. */
let leave = null;

function route() {
  if (leave) {
    try { leave(); } catch { /* the page is gone anyway */ }
    leave = null;
  }
  const name = (location.hash.match(/^#\/([a-z]+)/) || [])[1] || 'dashboard';
  if (!token() || name === 'login') {
    nav.hidden = true;
    logout.hidden = true;
    fill(view, loginPage());
    return;
  }
  nav.hidden = false;
  logout.hidden = false;
  for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', a.getAttribute('href') === '#/' + name);
  const page = pages[name] || dashboardPage;
  const shown = page();
  fill(view, shown.el);
  leave = shown.leave || null;
}

function loginPage() {
  const user = h('input', { name: 'username', autocomplete: 'username', value: 'admin', required: true });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const status = h('div');
  const form = h('form', {}, h('h1', {}, 'Log in'), h('label', {}, 'User name', user),
    h('label', {}, 'Password', password), h('button', { type: 'submit', id: 'login' }, 'Log in'), status);
  form.addEventListener('submit', async e => {
    e.preventDefault();
    try {
      const r = await post('/auth/login', { username: user.value, password: password.value });
      setToken(r.token);
      location.hash = '#/dashboard';
      route();
    } catch (err) {
      fill(status, message('error', err.status === 401 ? 'Wrong user name or password.' : err.message));
    }
  });
  setTimeout(() => password.focus(), 0);
  return h('div', { class: 'login' }, form);
}

logout.addEventListener('click', async () => {
  try { await post('/auth/logout'); } catch { /* the token is dropped either way */ }
  setToken(null);
  location.hash = '#/login';
});

window.addEventListener('hashchange', route);
route();
