// The page's only way to data: Berth's documented REST API, with an optional bearer token.

const TOKEN_KEY = "berth.token";

export class Unauthorized extends Error {}

export function token() {
  return window.localStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(value) {
  if (value) window.localStorage.setItem(TOKEN_KEY, value);
  else window.localStorage.removeItem(TOKEN_KEY);
}

/** GET a JSON document; throws Unauthorized on 401/403 and Error with the API's message. */
export async function get(path, params = {}) {
  const url = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") url.searchParams.set(key, value);
  }
  const headers = { Accept: "application/json" };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const response = await fetch(url, { headers });
  if (response.status === 401 || response.status === 403) {
    throw new Unauthorized(await messageOf(response));
  }
  if (!response.ok) {
    const error = new Error(await messageOf(response));
    error.status = response.status;
    throw error;
  }
  return response.json();
}

async function messageOf(response) {
  try {
    const body = await response.json();
    return (body.error && body.error.message) || response.statusText;
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

export function enc(part) {
  return encodeURIComponent(part);
}
