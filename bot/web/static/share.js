// Share capture: the browser's screen capture, one JPEG a second posted to this link.
// Stops on Stop, when the browser's own "stop sharing" ends the track, when the page closes,
// or when the server says the share is over (stopped, expired, not valid).
"use strict";
(function () {
  // This page is …/share/<token>, under whatever path prefix a reverse proxy adds.
  const here = location.pathname.replace(/\/+$/, "");
  const frameUrl = here + "/frame";
  const stopUrl = here + "/stop";
  const MAX_SIDE = 1920, INTERVAL_MS = 1000, QUALITY = 0.75;
  const $ = (id) => document.getElementById(id);
  let stream = null, timer = null, busy = false, sent = 0, ended = false;

  const expires = $("expires");
  const when = new Date(expires.textContent);
  if (!isNaN(when)) {
    expires.dateTime = expires.textContent;
    expires.textContent = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  function say(msg) { $("status").textContent = msg; }

  async function start() {
    if (stream) return;
    if (!navigator.mediaDevices || !navigator.mediaDevices.getDisplayMedia) {
      say("This browser cannot share its screen."); return;
    }
    try {
      stream = await navigator.mediaDevices.getDisplayMedia({ video: { frameRate: 5 }, audio: false });
    } catch (e) {
      say("Screen sharing was not started (" + e.name + ")."); stream = null; return;
    }
    const video = $("preview");
    video.srcObject = stream;
    video.hidden = false;
    await video.play().catch(() => {});
    stream.getVideoTracks().forEach((t) => t.addEventListener("ended", () => stop("You stopped sharing.")));
    $("start").disabled = true; $("stop").disabled = false;
    say("Sharing… Clankie can look now.");
    timer = setInterval(sample, INTERVAL_MS);
    sample();
  }

  async function sample() {
    if (busy || !stream) return;
    const video = $("preview");
    const w = video.videoWidth, h = video.videoHeight;
    if (!w || !h) return;
    busy = true;
    try {
      const scale = Math.min(1, MAX_SIDE / Math.max(w, h));
      const canvas = $("canvas");
      canvas.width = Math.round(w * scale); canvas.height = Math.round(h * scale);
      canvas.getContext("2d").drawImage(video, 0, 0, canvas.width, canvas.height);
      const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", QUALITY));
      if (!blob || !stream) return;
      const r = await fetch(frameUrl, { method: "POST", headers: { "Content-Type": "image/jpeg" }, body: blob });
      if (r.status === 201) { sent += 1; say("Sharing… " + sent + " picture" + (sent === 1 ? "" : "s") + " sent."); return; }
      const body = await r.json().catch(() => ({}));
      if (["bad_token", "expired", "stopped"].includes(body.error)) { ended = true; stop(body.message || "The share ended."); }
      else if (!["too_fast", "busy"].includes(body.error)) say("A picture was refused: " + (body.message || r.status));
    } catch (e) {
      say("Could not send a picture (" + e.message + "); trying again.");
    } finally { busy = false; }
  }

  function stop(message) {
    if (timer) { clearInterval(timer); timer = null; }
    if (stream) { stream.getTracks().forEach((t) => t.stop()); stream = null; }
    $("preview").hidden = true;
    $("stop").disabled = true;
    if (!ended) { ended = true; fetch(stopUrl, { method: "POST", keepalive: true }).catch(() => {}); }
    $("start").disabled = true;
    say(message || "Stopped. Clankie has forgotten what he saw.");
  }

  $("start").addEventListener("click", start);
  $("stop").addEventListener("click", () => stop());
  window.addEventListener("pagehide", () => { if (!ended) { ended = true; navigator.sendBeacon(stopUrl); } });
})();
