// Clankie inside Discord's call (docs/architecture.md §10 "The Activity").
// Discord's Embedded App SDK (vendored, same origin) does the handshake with the Discord client;
// the viewer authorizes (identify), the server proves them with Discord and answers a viewer
// credential for their own server's play; then activity.js's rendering watches that play with a
// transport that carries the credential: a header on every read, the first message of a
// WebSocket, stills by short-lived signed URLs. Every address is relative (Discord's proxy lets
// the page reach only its own origin). No inline script, no worker, no navigation.
// The SDK's entry comes from <html data-sdk>: a folder named by the vendored tree's hash
// (bot/web/activity_assets.py), so Discord's proxy cache never hands out an old copy.
const root = document.documentElement;
const { DiscordSDK, Events } = await import(new URL(root.dataset.sdk, document.baseURI).href);

const $ = (id) => document.getElementById(id);
const HEADER = "X-Clankie-Viewer";
const RENEW_BEFORE_S = 60;  // when the server does not say (renew_in_s) when to renew
const RETRY_S = 10;  // after a renewal that failed for a reason that may pass (network, 5xx, 429)

function say(sentence, problem) {
  const notice = $("notice");
  notice.textContent = sentence;
  notice.hidden = !sentence;
  notice.classList.toggle("problem", !!problem);
}

// A refused viewer sees only the refusal: the reason, and what to do about it when there is
// something to do; no state pill, no empty dashboard, no transport line. The play's parts were
// hidden from the start (discord.html) and are shown only once Discord has proven the viewer.
const JOIN_CALL = "To watch, join the voice channel where Clankie's activity is running, in the server " +
  "it plays for, and open the activity from there.";
function refuse(sentence, todo) {
  document.body.classList.add("refused");
  document.querySelector("main").hidden = true;
  document.querySelector("footer").hidden = true;
  $("state").hidden = true;
  $("watchers").hidden = true;
  $("transport").textContent = "";
  say(sentence, true);
  $("todo").textContent = todo || "";
  $("todo").hidden = !todo;
}
function reveal() {  // the viewer is proven: the play's parts appear
  document.querySelector("main").hidden = false;
  document.querySelector("footer").hidden = false;
  $("state").hidden = false;
}

function showWatchers(participants) {
  const list = $("watchers");
  list.replaceChildren(...participants.map((p) => {
    const li = document.createElement("li");
    li.textContent = p.nickname || p.global_name || p.username;
    li.dataset.user = p.id;
    return li;
  }));
  list.hidden = participants.length === 0;
}

async function postJSON(path, body, headers) {
  const r = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", ...(headers || {}) },
    body: JSON.stringify(body || {}),
    cache: "no-store",
  });
  let answer = null;
  try { answer = await r.json(); } catch (e) { answer = null; }
  if (!r.ok) {
    const why = (answer && answer.message) || "The server answered " + r.status + ".";
    const wait = Number(r.headers.get("Retry-After")) || 0;
    throw Object.assign(new Error(why), { sentence: why, status: r.status, retryAfter: wait });
  }
  return answer;
}

// A viewer's credential, renewed when the server says (renew_in_s: a minute before it expires,
// or half its life when that is shorter; counted from the answer, so the device's clock does not
// matter). Renewal asks Discord again whether the viewer is still in the call: when the server
// refuses (401, 403) the credential is dropped, the live socket closed and reads stop — the
// viewer sees the sentence and no more play. <html data-pass-expires> shows the expiry (seconds).
class Credential {
  constructor(answer) { this.renewed = []; this.revoked = []; this.take(answer); }
  take(answer) {
    this.value = answer.credential;
    root.dataset.passExpires = String(answer.expires_at);
    const inS = typeof answer.renew_in_s === "number"
      ? answer.renew_in_s : answer.expires_at - Date.now() / 1000 - RENEW_BEFORE_S;
    this.later(Math.max(1, inS));
    for (const f of this.renewed) f(this.value);
  }
  later(seconds) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.renew(), seconds * 1000);
  }
  async renew() {
    if (!this.value) return;
    try {
      this.take(await postJSON("v1/activity/renew", {}, { [HEADER]: this.value }));
      if (this.troubled) { this.troubled = false; say(""); }  // the last try's sentence is over
    } catch (e) {
      if (e.status === 401 || e.status === 403) {
        this.revoke(e.sentence);
      } else {  // it may pass: try again while the credential still holds
        this.troubled = true;
        say(e.sentence || "Your viewing pass could not be renewed; trying again.", true);
        this.later(Math.max(e.retryAfter || 0, RETRY_S));
      }
    }
  }
  revoke(sentence) {
    clearTimeout(this.timer);
    this.value = null;
    delete root.dataset.passExpires;
    for (const f of this.revoked) f();
    // the play, its state and how it came: gone
    refuse(sentence || "Your viewing pass has ended; reopen the activity.", JOIN_CALL);
  }
}

function transport(guild, credential, pollMs) {
  const api = "v1/guilds/" + guild + "/embodiment";
  async function getJSON(path) {
    if (!credential.value) throw new Error(path + ": no viewing pass");  // revoked: no more reads
    const r = await fetch(path, { headers: { Accept: "application/json", [HEADER]: credential.value }, cache: "no-store" });
    if (!r.ok) throw new Error(path + ": HTTP " + r.status);
    return r.json();
  }
  return {
    api,
    pollMs,
    getJSON,
    status: () => getJSON(api + "/activity-status"),
    // a still's signed URL carries its frame's hash: a new address per frame, so the proxy's cache never shows an old one
    stillSrc: (sha, last, st) => (st && (last ? st.lastStillUrl : st.stillUrl)) || null,
    live(on) {
      if (!window.WebSocket) { on.failed(); return; }
      const url = new URL(api + "/live", document.baseURI);
      url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
      let given = false;
      let said = null;  // the server's last error sentence, sent before it closes
      const ws = new WebSocket(url);
      credential.revoked.push(() => { given = true; ws.close(1000, "viewing pass ended"); });
      ws.addEventListener("open", () => {
        if (!credential.value) { ws.close(1000, "viewing pass ended"); return; }
        ws.send(JSON.stringify({ credential: credential.value }));
        credential.renewed.push((value) => { if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ credential: value })); });
        on.open();
      });
      // Messages arrive as Blobs, read asynchronously: each is handled after the one before, and
      // the close after them all, so the sentence sent before a close is known when it comes.
      let handled = Promise.resolve();
      const inTurn = (step) => { handled = handled.then(step).catch((err) => console.error(err)); };
      ws.addEventListener("message", (e) => inTurn(async () => {
        const msg = JSON.parse(typeof e.data === "string" ? e.data : await e.data.text());
        if (msg.type === "update") {  // the turns since the last update, then the newest status
          for (const t of msg.turns) on.turn(t);
          if (msg.status) on.status(msg.status);
        } else if (msg.type === "status") on.status(msg.data);
        else if (msg.type === "error") { said = msg.message; if (credential.value) say(msg.message, true); }
      }));
      ws.addEventListener("close", (e) => inTurn(() => {
        // 4403: renewal found the viewer gone from the activity (bot/web/activity_limits.py);
        // the pass is over, as when the renewal itself is refused: the sentence, no more play
        if (e.code === 4403 && credential.value) { given = true; credential.revoke(said); return; }
        if (!given && credential.value) { given = true; on.failed(); }
      }));
    },
  };
}

async function main() {
  const appId = root.dataset.applicationId;
  const pollMs = Math.max(500, Number(root.dataset.pollS || "2") * 1000);
  if (!appId) { refuse("Clankie is still starting; close the activity and open it again in a moment."); return; }
  const sdk = new DiscordSDK(appId, { disableConsoleLogOverride: true });
  await sdk.ready();
  if (!sdk.guildId) { refuse("Clankie plays for a server: open the activity in a server's voice channel."); return; }
  say("Checking with Discord who you are…");
  const state = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
  let code;
  try {
    ({ code } = await sdk.commands.authorize({
      client_id: appId, response_type: "code", state, prompt: "none", scope: ["identify"],
    }));
  } catch (e) {
    refuse("Discord did not let Clankie know who you are, so nothing can be shown.",
      "Close the activity and open it again, and let Clankie know who you are when Discord asks.");
    return;
  }
  let answer;
  try {
    answer = await postJSON("v1/activity/session", { code, instance_id: sdk.instanceId, guild_id: sdk.guildId });
  } catch (e) {  // 403: Discord does not put this viewer in this server's activity
    refuse(e.sentence || "The server could not be reached.", e.status === 403 ? JOIN_CALL : "");
    return;
  }
  await sdk.commands.authenticate({ access_token: answer.access_token });
  say("");
  reveal();
  const credential = new Credential(answer);
  window.ClankieWatch(transport(sdk.guildId, credential, pollMs));
  try {
    const { participants } = await sdk.commands.getInstanceConnectedParticipants();
    showWatchers(participants);
    await sdk.subscribe(Events.ACTIVITY_INSTANCE_PARTICIPANTS_UPDATE, (e) => showWatchers(e.participants));
  } catch (e) {
    $("watchers").hidden = true;  // who else is watching is a nicety; play shows without it
  }
}

main().catch((e) => refuse(e && e.sentence ? e.sentence : "Something went wrong starting the activity; reopen it."));
