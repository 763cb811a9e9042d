// Clankie's activity page: live still, story card, last turns, what he said.
// Live over server-sent events (v1/embodiment/events); falls back to polling every 2 s.
// Every address is relative to the page, so it works under a reverse proxy's path prefix.
// When play has ended it keeps what was seen last: the last picture ("last seen <time>"), the
// last turn's objective, intent, effect, progress and milestones (labelled as the last play),
// the last story card and the last turns.
//
// The rendering is shared: the Discord Activity (discord.html, discord_activity.mjs) loads this
// file with data-manual and calls window.ClankieWatch(transport) once the viewer is proven, its
// transport reading with the viewer's credential, showing stills by their signed URLs and
// living on a WebSocket. Loaded plainly, it watches with the local transport below.
"use strict";
(function () {
  // A server's own page (<prefix>/guilds/<id>/) reads that server's play; <prefix>/ reads the
  // local session's. Paths are relative to the page's base (the surface's root, whatever
  // prefix a proxy puts in front: a server's page says <base href="../../">).
  function localTransport() {
    const token = new URLSearchParams(location.search).get("token");
    const guild = (location.pathname.match(/\/guilds\/(\d+)\/?$/) || [])[1];
    const api = guild ? "v1/guilds/" + guild + "/embodiment" : "v1/embodiment";
    function url(path, extra) {
      const u = new URL(path, document.baseURI);
      if (token) u.searchParams.set("token", token);
      for (const [k, v] of Object.entries(extra || {})) u.searchParams.set(k, v);
      return u.toString();
    }
    return {
      api,
      pollMs: 2000,
      async getJSON(path) {
        const r = await fetch(url(path), { headers: { Accept: "application/json" }, cache: "no-store" });
        if (!r.ok) throw new Error(path + ": HTTP " + r.status);
        return r.json();
      },
      stillSrc(sha, last) {
        const base = api + "/sessions/live/still";
        return url(base, last ? { v: sha.slice(0, 16), last: "1" } : { v: sha.slice(0, 16) });
      },
      live(on) {  // server-sent events; on.failed() after three errors in a row
        if (!window.EventSource) { on.failed(); return; }
        let failures = 0;
        const es = new EventSource(url(api + "/events"));
        es.addEventListener("open", () => { failures = 0; on.open(); });
        es.addEventListener("status", (e) => { on.status(JSON.parse(e.data)); });
        es.addEventListener("turn", (e) => { on.turn(JSON.parse(e.data)); });
        es.addEventListener("error", () => {
          failures += 1;
          if (failures >= 3) { es.close(); on.failed(); }
        });
      },
    };
  }

  function watch(transport) {
    const api = transport.api;
    const base = api + "/sessions/live";
    const getJSON = transport.getJSON;
    const $ = (id) => document.getElementById(id);
    const MAX_TURNS = 12, MAX_LINES = 8;
    let frameSha = null, sessionId = null, polling = null, storyTimer = null, storyFor;
    const seenTurns = new Set();
    function text(id, value) { $(id).textContent = value === null || value === undefined || value === "" ? "—" : String(value); }

    // A world's progress metrics as journal/metrics.py writes them: "score 4 520 · best tile 512"
    // (a declared label, else the words of the camelCase name; thousands joined by a no-break space).
    let metricLabels = {};
    function metricsText(values, labels) {
      return Object.entries(values || {}).map(([name, v]) => {
        const label = (labels && labels[name]) || name.replace(/_/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
        const num = Number.isInteger(v) ? v : Math.round(v * 100) / 100;
        return label + " " + num.toLocaleString("en-US").replace(/,/g, "\u00a0");
      }).join(" · ");
    }

    // Progress: the world's metrics, and milestones reached of all when the world declares them.
    function progressText(a) {
      if (!a || !a.progress) return null;
      const parts = [];
      const metrics = metricsText(a.progress.metrics, metricLabels);
      if (metrics) parts.push(metrics);
      const reached = (a.progress.milestones || []).length;
      if (a.milestoneTotal) parts.push(reached + "/" + a.milestoneTotal + " milestones");
      return parts.join(" · ") || null;
    }

    const ENDED = {  // a session's outcome, as the room reads it
      stopped: "stopped", failed: "failed", budget_exhausted: "out of turns",
      budget: "stopped at its spending limit",
    };
    let storyTurn = null;
    function showStatus(st) {
      currentStatus = st;
      const s = st.session, last = s ? null : st.lastActivity || null, a = st.activity || last;
      const pill = $("state");
      if (!s) { pill.textContent = "not playing"; pill.className = "pill idle"; }
      else if (!st.frameSha256) { pill.textContent = "starting " + s.world + "…"; pill.className = "pill pending"; }
      else { pill.textContent = "playing " + s.world + " · turn " + s.turn; pill.className = "pill playing"; }
      if (s && s.sessionId !== sessionId) { sessionId = s.sessionId; resetTurns(sessionId); }
      const live = s ? s.sessionId : null;  // play started or ended: the story card follows
      if (live !== storyFor) { storyFor = live; storySoon(); }
      if (s && s.turn !== storyTurn) { storyTurn = s.turn; storySoon(); }  // and each turn played
      const label = $("now-label");
      label.hidden = !last;
      label.textContent = last
        ? "Last play: " + last.world + " with " + last.mind + ", " + (ENDED[last.ended || last.state] || last.ended || last.state) +
          " after turn " + last.turn
        : "";
      text("objective", a && a.objective);
      text("intent", a && a.intent);
      text("effect", a && a.lastEffect);
      if (a && a.metricLabels) metricLabels = a.metricLabels;
      text("metrics", progressText(a));
      const ms = a && a.progress && a.progress.milestones;
      text("milestones", ms && ms.length ? ms.join(", ") : null);
      showFrame(st.frameSha256, st.lastFrame);
    }

    function seenAt(iso) {
      const when = new Date(iso);
      if (isNaN(when)) return iso;
      const time = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
      return when.toDateString() === new Date().toDateString() ? time : when.toLocaleDateString() + " " + time;
    }

    // One image load at a time: while a frame loads, only the newest frame asked for waits.
    // Not playing, the last frame seen (if any) stays, captioned with when it was seen.
    let loading = false, wanted = null, wantedLast = false, wantedStatus = null, currentStatus = null;
    function showFrame(sha, last) {
      const img = $("still"), caption = $("still-caption");
      const lastSeen = !sha && last && last.sha256 ? last : null;
      if (lastSeen) sha = lastSeen.sha256;
      caption.hidden = !lastSeen;
      caption.textContent = lastSeen ? "last seen " + seenAt(lastSeen.capturedAt) : "";
      if (!sha) {
        img.hidden = true; delete img.dataset.sha; $("no-still").hidden = false; frameSha = null; wanted = null; return;
      }
      if (sha === frameSha) return;
      wanted = sha;
      wantedLast = !!lastSeen;
      wantedStatus = currentStatus;
      if (!loading) loadFrame();
    }
    function loadFrame() {
      const sha = wanted, last = wantedLast, st = wantedStatus;
      wanted = null;
      if (!sha || sha === frameSha) return;
      loading = true;
      const next = new Image();
      const done = (ok) => {
        loading = false;
        if (ok) {
          frameSha = sha;
          const img = $("still");
          img.src = next.src; img.dataset.sha = sha; img.hidden = false; $("no-still").hidden = true;
        }
        if (wanted) loadFrame();
      };
      next.onload = () => done(true);
      next.onerror = () => done(false);
      const src = transport.stillSrc(sha, last, st);
      if (!src) { done(false); return; }
      next.src = src;
    }

    // a new session: its turns and lines stay (a turn may arrive before the status naming its
    // session), every other session's go
    function resetTurns(keep) {
      for (const list of [$("turns"), $("lines")]) {
        for (const li of [...list.children]) if (li.dataset.session !== keep) li.remove();
      }
      for (const key of [...seenTurns]) if (!key.startsWith(keep + ":")) seenTurns.delete(key);
      $("turns-empty").hidden = $("turns").children.length > 0;
      $("lines-empty").hidden = $("lines").children.length > 0;
    }

    function addTurn(t) {
      const key = t.sessionId + ":" + t.turn;
      if (seenTurns.has(key)) return;
      seenTurns.add(key);
      const li = document.createElement("li");
      li.dataset.turn = t.turn;
      li.dataset.session = t.sessionId;
      const badge = document.createElement("span");
      badge.className = "badge " + t.outcome;
      badge.textContent = t.outcome.replace(/_/g, " ");
      const num = document.createElement("strong");
      num.textContent = "#" + t.turn + " ";
      const act = document.createElement("code");
      act.textContent = t.actionText;
      const eff = document.createElement("div");
      eff.className = "muted";
      eff.textContent = t.effect || t.detail || "";
      li.append(num, badge, act, eff);
      if (t.room && t.room.length) li.append(roomLines(t.room));
      const list = $("turns");
      inOrder(list, li, t.sessionId, t.turn);
      while (list.children.length > MAX_TURNS) list.lastChild.remove();
      $("turns-empty").hidden = true;
      if (t.speak) addLine(t.turn, t.speak, t.sessionId);
    }

    // newest first, in turn order whatever order they arrive in: a turn fetched after the live
    // stream opened may be older than the ones the stream already brought
    function inOrder(list, li, session, turn) {
      let sameSession = false;
      for (const c of list.children) {
        if (c.dataset.session !== session) continue;
        sameSession = true;
        if (Number(c.dataset.turn) < turn) { list.insertBefore(li, c); return; }
      }
      if (sameSession) list.append(li); else list.prepend(li);
    }

    // what the room said that this turn's decision heard: who, by which lane, and whether he heeded it
    function roomLines(lines) {
      const ul = document.createElement("ul");
      ul.className = "room";
      for (const r of lines) {
        const li = document.createElement("li");
        li.className = r.heeded ? "heeded" : "heard";
        li.dataset.line = r.id;
        li.textContent = r.name + " (" + r.source + "): “" + r.words + "” — " + (r.heeded ? "heeded" : "heard");
        ul.append(li);
      }
      return ul;
    }

    function addLine(turn, said, session) {
      const li = document.createElement("li");
      li.dataset.session = session;
      li.dataset.turn = turn;
      li.textContent = "“" + said + "” (turn " + turn + ")";
      const list = $("lines");
      inOrder(list, li, session, turn);
      while (list.children.length > MAX_LINES) list.lastChild.remove();
      $("lines-empty").hidden = true;
    }

    function showStory(body) {
      // playing: the live card; not playing: the last journey's card (as /play story shows it)
      const card = body.outcome === "card" ? body.card : body.outcome === "not_playing" ? body.last || null : null;
      $("story-card").hidden = !card;
      $("story-empty").hidden = body.outcome === "card";
      $("story-empty").textContent =
        body.outcome === "pending" ? "The story is starting…"
          : body.outcome === "not_playing" ? (card ? "Not playing right now. The last story:" : "Not playing right now.")
            : "No story yet.";
      const moments = $("moments");
      moments.replaceChildren();
      $("moments-title").hidden = !(card && card.moments && card.moments.length);
      if (!card) return;
      text("story-objective", card.objective);
      text("story-turns", card.turnsTaken);
      const storyMetrics = metricsText(card.metrics, metricLabels);  // a world without metrics has no row
      text("story-metrics", storyMetrics);
      $("story-metrics").hidden = $("story-metrics-label").hidden = !storyMetrics;
      text("story-maps", (card.maps || []).join(" → "));
      for (const m of (card.moments || []).slice().reverse()) {
        const li = document.createElement("li");
        li.textContent = m.effect + (m.toward ? " (toward " + m.toward + ")" : "") + (m.said ? " — “" + m.said + "”" : "");
        moments.append(li);
      }
    }

    async function refreshStory() { try { showStory(await getJSON(base + "/story")); } catch (e) { /* next tick */ } }
    function storySoon() { if (!storyTimer) storyTimer = setTimeout(() => { storyTimer = null; refreshStory(); }, 250); }

    async function refreshAll() {
      const story = refreshStory();  // the story card does not wait for (or fail with) the rest
      try {
        if (transport.status) {  // one route answers the whole status (the Activity's)
          const [st, turns] = await Promise.all([transport.status(), getJSON(base + "/turns")]);
          showStatus(st);
          for (const t of turns.turns) addTurn(t);
          return;
        }
        const [activity, session, turns] = await Promise.all([
          getJSON(base + "/activity"), getJSON(base), getJSON(base + "/turns"),
        ]);
        // the digest carries the frame's hash; the picture itself is fetched only when it changed
        const digest = activity.activity || null;
        let lastFrame = null;
        if (!session.session) {  // not playing: what was seen last, if anything
          const still = await getJSON(base + "/still");
          lastFrame = still.last ? { sha256: still.last.sha256, capturedAt: still.last.capturedAt } : null;
        }
        showStatus({
          session: session.session, activity: digest, frameSha256: (digest && digest.frameSha256) || null,
          lastFrame, lastActivity: activity.last || null,
        });
        for (const t of turns.turns) addTurn(t);
      } finally {
        await story;
      }
    }

    function startPolling() {
      if (polling) return;
      $("transport").textContent = "updating every " + transport.pollMs / 1000 + " s";
      polling = setInterval(() => refreshAll().catch(() => {}), transport.pollMs);
    }

    function startEvents() {
      transport.live({
        // (re)opened: what settled between the last fetch and now is fetched again (a turn is
        // shown once, in its place), so a turn is never lost in the gap before the stream
        open() { $("transport").textContent = "live"; refreshAll().catch(() => {}); },
        status: showStatus,
        turn(t) { addTurn(t); storySoon(); },
        failed: startPolling,
      });
    }

    refreshAll().catch(() => {}).finally(startEvents);
  }

  window.ClankieWatch = watch;
  if (!(document.currentScript && document.currentScript.hasAttribute("data-manual"))) watch(localTransport());
})();
