// Runs first, before the page's modules load: asks for the run a `#/run/ID` address opens, so the answer is on its
// way while app.js and its imports arrive (app.js takes it once, for that address only; any other request is its own).
(() => {
  const m = /^#\/run\/(.+)$/.exec(location.hash);
  if (!m) return;
  let id;
  try {
    id = decodeURIComponent(m[1]);
  } catch {
    return; // app.js shows the bad address
  }
  const url = `/api/runs/${encodeURIComponent(id)}`;
  const token = new URLSearchParams(location.search).get("token") ?? "";
  window.phasekitEarly = { url, response: fetch(url, { cache: "no-store", headers: { "x-phasekit-token": token } }) };
})();
