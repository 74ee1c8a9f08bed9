// The admin API, with the login token kept in sessionStorage (gone when the tab closes).

const KEY = 'fleetmq.token';

export const token = () => sessionStorage.getItem(KEY);

export function setToken(t) {
  if (t) sessionStorage.setItem(KEY, t);
  else sessionStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** Calls /api/v1{path}; a 401 forgets the token and goes back to the login page. */
export async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  const t = token();
  if (t) headers.Authorization = 'Bearer ' + t;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let r;
  try {
    r = await fetch('/api/v1' + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, 'The node did not answer: ' + e.message);
  }
  if (r.status === 401 && path !== '/auth/login') {
    setToken(null);
    location.hash = '#/login';
    throw new ApiError(401, 'Your login ended; log in again.');
  }
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!r.ok) throw new ApiError(r.status, data && data.message ? data.message : 'HTTP ' + r.status);
  return data;
}

export const get = path => api('GET', path);
export const post = (path, body) => api('POST', path, body);
export const del = path => api('DELETE', path);

/** ?a=1&b=2 from an object, leaving out empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

/** One path segment, with / and everything else percent-encoded. */
export const segment = s => encodeURIComponent(s);
