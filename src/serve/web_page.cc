#include "serve/web_page.h"

namespace ridge {
namespace {

// Element ids are stable (tests drive the page by them): #prompt, #send, #stop, #output (the
// conversation; the streamed reply lands in its last .assistant turn), #model, #temperature,
// #max-tokens, #system, #api-key, #metrics (the live view), #chart, #roofline (an <svg>, one .step-point per
// recent engine step), #roofline-caption.
constexpr std::string_view kPage = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ridge</title>
<style>
  :root { --bg: #f6f7f9; --panel: #fff; --ink: #1d2330; --muted: #6b7385; --line: #dde1e8; --accent: #2f6fdf; --warn: #c0392b; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--ink); background: var(--bg); }
  header { display: flex; align-items: baseline; gap: 12px; padding: 10px 18px; border-bottom: 1px solid var(--line); background: var(--panel); }
  header h1 { font-size: 18px; margin: 0; }
  header .model { color: var(--muted); }
  main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(280px, 2fr); gap: 16px; padding: 16px; }
  section { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px; }
  h2 { font-size: 14px; margin: 0 0 10px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
  #output { height: 52vh; overflow-y: auto; border: 1px solid var(--line); border-radius: 6px; padding: 8px; background: #fbfcfd; }
  .turn { white-space: pre-wrap; margin: 6px 0; padding: 6px 10px; border-radius: 6px; }
  .turn.user { background: #e8f0fe; }
  .turn.assistant { background: #f1f3f5; }
  .turn.assistant.streaming::after { content: "▍"; color: var(--accent); }
  .turn.error { color: var(--warn); background: #fdecea; }
  .turn details.thinking { color: var(--muted); font-size: 12px; margin-bottom: 4px; }
  .note { color: var(--muted); font-size: 12px; margin: -2px 0 8px 10px; }
  textarea { width: 100%; min-height: 70px; margin-top: 8px; font: inherit; padding: 6px; border: 1px solid var(--line); border-radius: 6px; }
  .row { display: flex; flex-wrap: wrap; gap: 10px; align-items: center; margin-top: 8px; }
  label { color: var(--muted); font-size: 12px; display: flex; flex-direction: column; gap: 2px; }
  input, select { font: inherit; padding: 3px 6px; border: 1px solid var(--line); border-radius: 4px; }
  input[type=number] { width: 90px; }
  button { font: inherit; padding: 6px 14px; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: var(--accent); }
  button:disabled { opacity: .5; cursor: default; }
  .cards { display: grid; grid-template-columns: repeat(2, 1fr); gap: 8px; }
  .card { border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; }
  .card .k { color: var(--muted); font-size: 12px; }
  .card .v { font-size: 18px; font-variant-numeric: tabular-nums; }
  canvas { width: 100%; height: 170px; margin-top: 10px; border: 1px solid var(--line); border-radius: 6px; }
  .legend { font-size: 12px; color: var(--muted); }
  .legend b { display: inline-block; width: 10px; height: 3px; vertical-align: middle; margin: 0 4px 0 10px; }
  #roofline { display: block; width: 100%; height: auto; margin-top: 10px; border: 1px solid var(--line); border-radius: 6px; }
  #roofline text { font: 10px system-ui, sans-serif; fill: var(--muted); }
  #roofline .grid { stroke: #eef0f4; }
  #roofline .roof { fill: none; stroke: var(--ink); stroke-width: 1.5; }
  #roofline .roof-label { fill: var(--ink); }
  @media (max-width: 800px) { main { grid-template-columns: 1fr; } }
</style>
</head>
<body>
<header><h1>ridge</h1><span class="model" id="model-name"></span><span class="model" id="models-loaded"></span></header>
<main>
  <section id="chat">
    <h2>Chat</h2>
    <div id="output" aria-live="polite"></div>
    <textarea id="prompt" placeholder="Message (Enter sends, Shift+Enter for a new line)"></textarea>
    <div class="row">
      <button id="send">Send</button>
      <button id="stop" class="secondary" disabled>Stop</button>
      <button id="clear" class="secondary">Clear</button>
    </div>
    <div class="row">
      <label>Model <select id="model"></select></label>
      <label>Temperature <input id="temperature" type="number" min="0" max="2" step="0.1" value="0.7"></label>
      <label>Max tokens <input id="max-tokens" type="number" min="1" step="1" value="256"></label>
      <label>System prompt <input id="system" type="text" placeholder="(the model's default)"></label>
      <label>API key <input id="api-key" type="password" placeholder="if --api-key is set"></label>
    </div>
  </section>
  <section id="metrics">
    <h2>Server</h2>
    <div class="cards">
      <div class="card"><div class="k">generation throughput</div><div class="v" id="m-throughput">–</div></div>
      <div class="card"><div class="k">running / waiting</div><div class="v" id="m-queue">–</div></div>
      <div class="card"><div class="k">TTFT p50 / p99</div><div class="v" id="m-ttft">–</div></div>
      <div class="card"><div class="k">inter-token p50 / p99</div><div class="v" id="m-itl">–</div></div>
      <div class="card"><div class="k">KV cache</div><div class="v" id="m-kv">–</div></div>
      <div class="card"><div class="k">requests done (stop / length / abort)</div><div class="v" id="m-requests">–</div></div>
      <div class="card"><div class="k">speculation (drafts kept)</div><div class="v" id="m-spec">–</div></div>
    </div>
    <canvas id="chart" width="560" height="170"></canvas>
    <div class="legend"><b style="background:#2f6fdf"></b>sequences per step <b style="background:#e67e22"></b>tokens/s (last 2 min)</div>
    <div id="roofline-box">
      <svg id="roofline" viewBox="0 0 440 230" role="img" aria-label="roofline of the recent engine steps"></svg>
      <div class="legend">step: <b style="width:36px;height:6px;background:linear-gradient(90deg,#2f6fdf,#e67e22)"></b>pure decode → pure prefill <b style="background:#1d2330"></b>memory / compute roof</div>
    </div>
    <div class="legend" id="roofline-caption"></div>
  </section>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const chat = { messages: [], controller: null };

function authHeaders() {
  const h = { "Content-Type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

// The model picker: generative models (a server of many models says each one's state; picking
// an unloaded one loads it on the first message).
async function loadModels() {
  try {
    const r = await fetch("/v1/models", { headers: authHeaders() });
    const list = (await r.json()).data || [];
    const chatModels = list.filter((m) => m.task !== "embed" || list.length === 1);
    const picked = $("model").value;
    const label = (m) => m.status ? m.id + " · " + m.status.value : m.id;
    $("model").replaceChildren(...chatModels.map((m) => new Option(label(m), m.id)));
    if (chatModels.some((m) => m.id === picked)) $("model").value = picked;
    const m = chatModels.find((x) => x.id === $("model").value) || chatModels[0];
    if (m) $("model-name").textContent = m.id + (m.max_model_len ? " · context " + m.max_model_len : "");
    const many = list.some((x) => x.status);
    $("models-loaded").textContent = many
        ? " · loaded: " + (list.filter((x) => x.status.value === "loaded").map((x) => x.id).join(", ") || "none") : "";
    if (many && !modelsTimer) modelsTimer = setInterval(loadModels, 3000);
  } catch (e) { /* the metrics poll shows the server as unreachable */ }
}
let modelsTimer = null;

function addTurn(cls, text) {
  const div = document.createElement("div");
  div.className = "turn " + cls;
  div.textContent = text;
  $("output").appendChild(div);
  $("output").scrollTop = $("output").scrollHeight;
  return div;
}

function addNote(text) {
  const div = document.createElement("div");
  div.className = "note";
  div.textContent = text;
  $("output").appendChild(div);
}

// Yields the data field of each Server-Sent Event in a fetch response.
async function* sseData(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split("\n")) if (line.startsWith("data: ")) yield line.slice(6);
    }
  }
}

function setBusy(busy) {
  $("send").disabled = busy;
  $("stop").disabled = !busy;
}

async function send() {
  const text = $("prompt").value.trim();
  if (!text || chat.controller) return;
  $("prompt").value = "";
  chat.messages.push({ role: "user", content: text });
  addTurn("user", text);
  const reply = addTurn("assistant streaming", "");
  const answer = reply.appendChild(document.createElement("span"));
  let thinking = null;  // a thinking model's reasoning_content, folded above the answer
  const system = $("system").value.trim();
  const body = {
    model: $("model").value || undefined,
    messages: system ? [{ role: "system", content: system }, ...chat.messages] : chat.messages,
    stream: true,
    stream_options: { include_usage: true },
    temperature: Number($("temperature").value),
    max_tokens: Number($("max-tokens").value),
  };
  chat.controller = new AbortController();
  setBusy(true);
  const started = performance.now();
  let first = null, usage = null, finish = null;
  try {
    const r = await fetch("/v1/chat/completions", { method: "POST", headers: authHeaders(), body: JSON.stringify(body), signal: chat.controller.signal });
    if (!r.ok) {
      const err = await r.json().catch(() => null);
      throw new Error((err && err.error && err.error.message) || "HTTP " + r.status);
    }
    for await (const data of sseData(r)) {
      if (data === "[DONE]") break;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message);
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices && chunk.choices[0];
      if (!choice) continue;
      if (choice.finish_reason) finish = choice.finish_reason;
      const thought = choice.delta && choice.delta.reasoning_content;
      if (thought) {
        if (first === null) first = performance.now();
        if (!thinking) {
          const fold = document.createElement("details");
          fold.className = "thinking";
          fold.appendChild(document.createElement("summary")).textContent = "Thinking";
          thinking = fold.appendChild(document.createElement("div"));
          reply.insertBefore(fold, answer);
        }
        thinking.textContent += thought;
      }
      const piece = choice.delta && choice.delta.content;
      if (piece) {
        if (first === null) first = performance.now();
        answer.textContent += piece;
        $("output").scrollTop = $("output").scrollHeight;
      }
    }
    chat.messages.push({ role: "assistant", content: answer.textContent });
    const seconds = (performance.now() - started) / 1000;
    const parts = [];
    if (usage) parts.push(usage.completion_tokens + " tokens", (usage.completion_tokens / seconds).toFixed(1) + " tok/s");
    if (usage && usage.spec_decode)
      parts.push("speculation: " + usage.spec_decode.accepted_tokens + " / " + usage.spec_decode.draft_tokens +
                 " drafts kept (" + Math.round(100 * usage.spec_decode.acceptance_rate) + "%)");
    if (first !== null) parts.push("first token " + Math.round(first - started) + " ms");
    if (finish) parts.push("finish: " + finish);
    addNote(parts.join(" · "));
  } catch (e) {
    if (e.name === "AbortError") addNote("stopped");
    else addTurn("error", e.message);
    chat.messages.pop();  // the unanswered user turn is not sent again
  } finally {
    reply.classList.remove("streaming");
    chat.controller = null;
    setBusy(false);
  }
}

// ---- live metrics --------------------------------------------------------------------------
const history = { seqs: [], tps: [] };
const HISTORY_POINTS = 120;
let previous = null;

function ms(seconds) { return seconds == null ? "–" : seconds < 1 ? Math.round(seconds * 1000) + " ms" : seconds.toFixed(2) + " s"; }
function pair(p) { return p ? ms(p.p50) + " / " + ms(p.p99) : "–"; }

function push(series, value) {
  series.push(value);
  if (series.length > HISTORY_POINTS) series.shift();
}

function drawChart() {
  const canvas = $("chart");
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 18;
  ctx.clearRect(0, 0, w, h);
  ctx.strokeStyle = "#dde1e8";
  ctx.beginPath(); ctx.moveTo(pad, h - pad); ctx.lineTo(w - 4, h - pad); ctx.stroke();
  const line = (series, color, label) => {
    const max = Math.max(1, ...series);
    ctx.strokeStyle = color; ctx.lineWidth = 2; ctx.beginPath();
    series.forEach((v, i) => {
      const x = pad + (w - pad - 4) * (i / (HISTORY_POINTS - 1));
      const y = h - pad - (h - 2 * pad) * (v / max);
      i ? ctx.lineTo(x, y) : ctx.moveTo(x, y);
    });
    ctx.stroke();
    ctx.fillStyle = color; ctx.font = "11px system-ui";
    ctx.fillText(label + " max " + (Number.isInteger(max) ? max : max.toFixed(1)), pad + (color === "#2f6fdf" ? 0 : 170), 12);
  };
  line(history.seqs, "#2f6fdf", "seqs");
  line(history.tps, "#e67e22", "tok/s");
}

// ---- roofline: the recent engine steps under this machine's two ceilings ----------------------------
const PREFIXES = ["", "k", "M", "G", "T", "P", "E"];
function eng(v, unit) {  // 1.5e10, "B/s" -> "15 GB/s"
  let i = 0;
  for (; v >= 999.5 && i < PREFIXES.length - 1; i++) v /= 1000;
  return (+v.toPrecision(3) + " " + PREFIXES[i] + unit).trim();
}
function shareColor(f) {  // prefill share: 0 blue (pure decode) .. 1 orange (pure prefill)
  const mix = (a, b) => Math.round(a + (b - a) * f);
  return "rgb(" + mix(47, 230) + "," + mix(111, 126) + "," + mix(223, 34) + ")";
}

function drawRoofline(slo) {
  const bw = slo && slo.memory_bw, peak = slo && slo.compute_peak;
  $("roofline-box").hidden = !(bw > 0 && peak > 0);
  if (!(bw > 0 && peak > 0)) { $("roofline-caption").textContent = "roofline: the engine has no step model"; return; }
  const lg = Math.log10, ridge = peak / bw;
  const pts = slo.steps.filter((p) => p.s > 0 && p.flops > 0 && p.bytes > 0).map((p) => ({ x: p.flops / p.bytes, y: p.flops / p.s, p }));
  const xs = pts.map((q) => lg(q.x)), ys = pts.map((q) => lg(q.y));
  const xlo = Math.floor(Math.min(lg(ridge / 30), ...xs)), xhi = Math.ceil(Math.max(lg(ridge * 8), ...xs) + 0.05);
  const ylo = Math.floor(Math.min(lg(bw) + xlo, ...ys)), yhi = Math.ceil(Math.max(lg(peak), ...ys) + 0.1);
  const W = 440, H = 230, L = 66, R = 14, T = 8, B = 32;
  const X = (v) => (L + (W - L - R) * (lg(v) - xlo) / (xhi - xlo)).toFixed(1);
  const Y = (v) => (H - B - (H - T - B) * (lg(v) - ylo) / (yhi - ylo)).toFixed(1);
  let svg = "";
  for (let e = xlo, every = Math.ceil((xhi - xlo) / 7); e <= xhi; e++) {
    svg += `<line class="grid" x1="${X(10 ** e)}" x2="${X(10 ** e)}" y1="${T}" y2="${H - B}"/>`;
    if ((e - xlo) % every === 0) svg += `<text x="${X(10 ** e)}" y="${H - B + 12}" text-anchor="middle">${eng(10 ** e, "")}</text>`;
  }
  for (let e = ylo, every = Math.ceil((yhi - ylo) / 6); e <= yhi; e++) {
    svg += `<line class="grid" x1="${L}" x2="${W - R}" y1="${Y(10 ** e)}" y2="${Y(10 ** e)}"/>`;
    if ((e - ylo) % every === 0) svg += `<text x="${L - 4}" y="${Y(10 ** e)}" dy="3" text-anchor="end">${eng(10 ** e, "FLOP/s")}</text>`;
  }
  svg += `<text x="${(L + W - R) / 2}" y="${H - 4}" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>`;
  const x0 = 10 ** xlo, slope = Math.atan2(Y(bw * x0) - Y(peak), X(ridge) - X(x0)) * 180 / Math.PI;
  svg += `<path class="roof" d="M${X(x0)},${Y(bw * x0)} L${X(ridge)},${Y(peak)} L${X(10 ** xhi)},${Y(peak)}"/>` +
         `<text class="roof-label" x="${W - R - 4}" y="${Y(peak)}" dy="-4" text-anchor="end">compute ${eng(peak, "FLOP/s")}</text>` +
         `<text class="roof-label" transform="translate(${X(x0 * 1.2)},${Y(bw * x0 * 1.2)}) rotate(${-slope})" dy="-4">memory ${eng(bw, "B/s")}</text>` +
         `<text x="${X(ridge)}" y="${Y(peak)}" dx="4" dy="12">ridge ${eng(ridge, "FLOP/byte")}</text>`;
  for (const { x, y, p } of pts) {
    const prefill = p.tokens > 0 ? 1 - p.decode / p.tokens : 0;
    svg += `<circle class="step-point" cx="${X(x)}" cy="${Y(y)}" r="3" fill="${shareColor(prefill)}" fill-opacity="0.75">` +
           `<title>${p.tokens - p.decode} prefill + ${p.decode} decode tokens · ${ms(p.s)} (model ${ms(p.predicted_s)}) · ${eng(y, "FLOP/s")}</title></circle>`;
  }
  $("roofline").innerHTML = svg;
  const parts = ["decode at " + (100 * slo.decode_bandwidth_fraction).toFixed(1) + "% of memory bandwidth",
                 "step model error " + (100 * slo.model_error).toFixed(1) + "%"];
  const all = slo.goodput && slo.goodput.all;
  if (all) parts.push("goodput " + (all.met + all.missed ? (100 * all.met / (all.met + all.missed)).toFixed(1) + "% (" + all.met + " / " + (all.met + all.missed) + ")" : "–"));
  if (!slo.measured_machine) parts.push("roofs are placeholders (run ridge probe)");
  $("roofline-caption").textContent = parts.join(" · ");
}

async function pollMetrics() {
  try {
    const picked = $("model").value;
    const r = await fetch("/metrics/json" + (picked ? "?model=" + encodeURIComponent(picked) : ""), { headers: authHeaders() });
    const m = await r.json();
    const now = performance.now();
    let tps = 0;
    if (previous) tps = Math.max(0, (m.generation_tokens_total - previous.tokens) / ((now - previous.at) / 1000));
    previous = { tokens: m.generation_tokens_total, at: now };
    $("m-throughput").textContent = tps.toFixed(1) + " tok/s";
    $("m-queue").textContent = m.running + " / " + m.waiting;
    $("m-ttft").textContent = pair(m.ttft_seconds);
    $("m-itl").textContent = pair(m.itl_seconds);
    $("m-kv").textContent = (100 * m.kv_cache_usage).toFixed(1) + "% (" + m.kv_blocks_used + " / " + m.kv_blocks_total + " blocks)";
    $("m-requests").textContent = m.requests.stop + " / " + m.requests.length + " / " + m.requests.abort;
    const sd = m.spec_decode;
    $("m-spec").textContent = sd && sd.draft_tokens > 0
        ? (100 * sd.acceptance_rate).toFixed(0) + "% (" + sd.accepted_tokens + " / " + sd.draft_tokens + ")" : "off";
    push(history.seqs, m.batch_seqs);
    push(history.tps, tps);
    drawChart();
    drawRoofline(m.slo);
  } catch (e) {
    $("m-throughput").textContent = "server unreachable";
  }
}

$("send").addEventListener("click", send);
$("stop").addEventListener("click", () => chat.controller && chat.controller.abort());
$("clear").addEventListener("click", () => { chat.messages = []; $("output").replaceChildren(); });
$("prompt").addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); send(); } });
$("api-key").addEventListener("change", loadModels);
loadModels();
$("model").addEventListener("change", loadModels);
pollMetrics();
setInterval(pollMetrics, 1000);
</script>
</body>
</html>
)HTML";

}  // namespace

std::string_view web_page_html() { return kPage; }

}  // namespace ridge
