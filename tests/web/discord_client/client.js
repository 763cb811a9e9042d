// The Discord client's side of the Embedded App SDK's postMessage protocol (SDK 2.5.0,
// output/Discord.mjs; FACTS.md "Discord Activities"): every message is [opcode, payload] with
// HANDSHAKE 0, FRAME 1, CLOSE 2. The SDK sends HANDSHAKE {v, encoding, client_id, frame_id,
// sdk_version}; the client answers a READY dispatch, then each command frame {cmd, args, nonce}
// with {cmd, evt: null, nonce, data}. Optional fields are left out, never null (the SDK's zod
// schemas refuse null where a field is optional). The code AUTHORIZE answers comes from the test
// (POST code), which asks the Discord fake for one.
"use strict";
const HANDSHAKE = 0, FRAME = 1;
const log = (window.clientLog = []);
let setup, activityOrigin, frame;

function send(payload) { frame.contentWindow.postMessage([FRAME, payload], activityOrigin); }
function reply(cmd, nonce, data) { send({ cmd, evt: null, nonce, data }); }
function participant(p) { return { id: p.id, username: p.username, global_name: p.global_name, discriminator: "0", flags: 0, bot: false }; }

window.dispatchParticipants = (participants) => {
  send({ cmd: "DISPATCH", evt: "ACTIVITY_INSTANCE_PARTICIPANTS_UPDATE", nonce: null, data: { participants: participants.map(participant) } });
};

async function answer(cmd, args, nonce, evt) {
  if (cmd === "AUTHORIZE") {
    const ok = args.client_id === setup.applicationId && args.response_type === "code" && args.prompt === "none" &&
      JSON.stringify(args.scope) === JSON.stringify(["identify"]) && typeof args.state === "string" && args.state.length > 0;
    if (!ok) { send({ cmd, evt: "ERROR", nonce, data: { code: 4002, message: "bad authorize args" } }); return; }
    const r = await fetch("code", { method: "POST" });
    reply(cmd, nonce, { code: (await r.json()).code });
  } else if (cmd === "AUTHENTICATE") {
    window.authenticatedWith = args.access_token;
    reply(cmd, nonce, {
      access_token: args.access_token,
      user: { username: setup.user.username, discriminator: "0", id: setup.user.id, public_flags: 0 },
      scopes: ["identify"],
      expires: new Date(Date.now() + 604800000).toISOString(),
      application: { description: "", id: setup.applicationId, name: "Clankie" },
    });
  } else if (cmd === "GET_ACTIVITY_INSTANCE_CONNECTED_PARTICIPANTS") {
    reply(cmd, nonce, { participants: setup.participants.map(participant) });
  } else if (cmd === "SUBSCRIBE") {
    window.subscribed = evt;
    reply(cmd, nonce, { evt });
  } else {
    send({ cmd, evt: "ERROR", nonce, data: { code: 1000, message: "this test client does not know " + cmd } });
  }
}

window.addEventListener("message", (event) => {
  if (event.origin !== activityOrigin || !Array.isArray(event.data)) return;
  const [opcode, payload] = event.data;
  log.push([opcode, payload.cmd || null, payload.evt || null]);
  if (opcode === HANDSHAKE) {
    window.handshake = payload;
    window.readyAt = performance.timeOrigin + performance.now();
    send({
      cmd: "DISPATCH", evt: "READY", nonce: null,
      data: { v: 1, config: { api_endpoint: "//discord.com/api", environment: "production" },
        user: { id: setup.user.id, username: setup.user.username, discriminator: "0" } },
    });
  } else if (opcode === FRAME && payload.cmd) {
    answer(payload.cmd, payload.args || {}, payload.nonce, payload.evt);
  }
});

(async () => {
  setup = await (await fetch("setup")).json();
  const url = new URL(setup.activityUrl);
  activityOrigin = url.origin;
  frame = document.getElementById("activity");
  if (setup.width) { frame.width = setup.width; frame.height = setup.height; }
  frame.src = url.toString();
})();
