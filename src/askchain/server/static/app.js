// askchain web UI: asks over POST /query and renders the Server-Sent Events as they arrive.
"use strict";

const PAGE_SIZE = 25;
// Labels for the stages askchain emits; any other stage is shown by its own name.
const STAGE_LABELS = {
  rewrite: "Rewrite follow-up",
  plan: "Plan",
  steps: "Answer step by step",
  examples: "Find examples",
  schema_linking: "Link schema",
  values: "Retrieve values",
  build_context: "Build context",
  generate: "Generate SQL",
  draft: "Draft · direct samples",
  direct: "Generate · direct",
  divide_and_conquer: "Generate · divide & conquer",
  query_plan: "Generate · query plan",
  role_play: "Generate · role play",
  synthetic: "Generate · synthetic examples",
  execute: "Execute",
  revise: "Validate & revise",
  select: "Select",
  answerable: "Check the data has it",
  confidence: "Confidence",
  answer: "Answer",
};

const state = { threadId: null, busy: false, schema: null };
const $ = (selector) => document.querySelector(selector);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "html") node.innerHTML = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== null && value !== undefined) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function formatValue(value) {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number" && !Number.isInteger(value)) return value.toLocaleString(undefined, { maximumFractionDigits: 6 });
  return String(value);
}

// ---- API token: a server beyond loopback answers 401 until the browser sends it ---------------------
const TOKEN_KEY = "askchain.token";
let tokenPrompt = null; // one prompt at a time, shared by the requests that were refused together

// fetch() with the kept token as a Bearer header; on 401 the user is asked for the token and the request retried.
async function api(path, options = {}) {
  for (;;) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    const headers = { ...options.headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) };
    const response = await fetch(path, { ...options, headers });
    if (response.status !== 401) return response;
    if (sessionStorage.getItem(TOKEN_KEY) !== token) continue; // another request was given a new token meanwhile
    const entered = await askForToken(await errorText(response.clone()));
    if (!entered) return response;
    sessionStorage.setItem(TOKEN_KEY, entered);
  }
}

function askForToken(reason) {
  tokenPrompt ??= new Promise((resolve) => {
    const dialog = $("#token-dialog");
    $("#token-reason").textContent = reason;
    $("#token").value = "";
    dialog.addEventListener("close", () => {
      tokenPrompt = null;
      resolve(dialog.returnValue === "ok" ? $("#token").value.trim() : null);
    }, { once: true });
    dialog.returnValue = "";
    dialog.showModal();
  });
  return tokenPrompt;
}

// ---- Server-Sent Events over fetch (EventSource cannot POST) -----------------------------------
async function* readEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let boundary;
    while ((boundary = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary).replace(/^\r?\n\r?\n/, "");
      let name = "message";
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) yield { name, data: JSON.parse(data.join("\n")) };
    }
  }
}

// ---- A turn card ---------------------------------------------------------------------------------
class TurnView {
  constructor(question) {
    this.stages = new Map();
    this.generated = [];
    this.executions = null;
    this.selection = null;
    this.stageList = el("ol", { class: "stages", "aria-label": "Progress" });
    this.rewritten = el("p", { class: "rewritten", hidden: "" });
    this.plan = el("ol", { class: "panel plan", hidden: "", "aria-label": "Plan" });
    this.answer = el("div", { class: "answer" });
    this.answerRow = el("div", { class: "answer-row", hidden: "" }, el("span", { class: "avatar answer-avatar" }, "A"), this.answer);
    this.error = el("div", { class: "error", role: "alert", hidden: "" });
    this.chart = el("div", { class: "chart", hidden: "" });
    this.sql = el("div", { class: "panel sql-panel", hidden: "" });
    this.candidates = el("details", { class: "panel candidates", hidden: "" });
    this.table = el("div", { class: "panel table-panel", hidden: "" });
    this.footer = el("footer", { class: "turn-footer", hidden: "" });
    this.root = el("article", { class: "turn" },
      el("div", { class: "question-row" }, el("span", { class: "avatar" }, "Q"), el("div", {},
        el("p", { class: "question" }, question), this.rewritten)),
      this.stageList, this.plan, this.error, this.answerRow, this.chart, this.sql, this.candidates, this.table, this.footer);
  }

  stage(event) {
    const key = event.step ? `${event.step}:${event.stage}` : event.stage;
    let item = this.stages.get(key);
    if (!item) {
      const name = STAGE_LABELS[event.stage] || event.stage.replace(/_/g, " ");
      const label = event.step ? `Step ${event.step} · ${name}` : name;
      item = el("li", { class: "stage" }, el("span", { class: "dot" }), el("span", { class: "label" }, label), el("span", { class: "time" }));
      this.stages.set(key, item);
      this.stageList.append(item);
    }
    item.classList.toggle("running", event.status === "start");
    item.classList.toggle("done", event.status === "end");
    if (event.status === "end" && typeof event.seconds === "number") item.querySelector(".time").textContent = `${event.seconds.toFixed(2)} s`;
  }

  finishStages(failed) {
    for (const item of this.stages.values()) {
      if (item.classList.contains("running")) {
        item.classList.remove("running");
        item.classList.add(failed ? "failed" : "done");
      }
    }
  }

  showRewrite(event) {
    this.rewritten.hidden = false;
    this.rewritten.textContent = `Interpreted as: ${event.question}`;
  }

  // A question answered in steps: the plan, then each step's SQL and row count as it finishes; the candidates
  // shown are the running step's, and the last step's SQL and rows are the answer's.
  showPlan(event) {
    this.plan.replaceChildren(...event.steps.map((step) => el("li", { class: "plan-step" }, el("p", {}, step))));
    this.plan.hidden = false;
  }

  showStep(event) {
    const item = this.plan.children[event.step - 1];
    if (event.status === "start") {  // the panels show the running step; the last one's stay as the answer's
      Object.assign(this, { generated: [], executions: null, selection: null });
      for (const part of [this.sql, this.table, this.error, this.candidates]) part.hidden = true;
      if (item) item.classList.add("running");
      return;
    }
    if (!item) return;
    item.classList.remove("running");
    item.classList.add("done");
    const outcome = event.error ? `failed: ${event.error}` : `${event.row_count} row${event.row_count === 1 ? "" : "s"}`;
    item.append(el("pre", { class: "sql" }, el("code", { html: highlightSql(event.sql || "") })), el("p", { class: "muted" }, outcome));
  }

  showSql(event) {
    if (!event.sql) return;
    const copy = el("button", { class: "button small ghost", type: "button" }, "Copy");
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(event.sql);
        copy.textContent = "Copied";
      } catch {
        copy.textContent = "Copy failed";
      }
      setTimeout(() => (copy.textContent = "Copy"), 1500);
    });
    this.sql.replaceChildren(
      el("div", { class: "panel-head" }, el("span", {}, `SQL · ${event.dialect || ""}`), copy),
      el("pre", { class: "sql" }, el("code", { html: highlightSql(formatSql(event.sql)) })),
    );
    this.sql.hidden = false;
  }

  // Pipeline progress: candidates per generator, then each revision round's executions, then the selection.
  showCandidates(event) {
    this.generated.push(...(event.sql || []).map((sql) => ({ sql, generator: event.generator })));
    this.renderCandidates();
  }

  showRevision(event) {
    this.executions = event.executions || [];
    this.renderCandidates();
  }

  showSelection(event) {
    this.selection = event;
    this.renderCandidates();
  }

  renderCandidates() {
    const list = this.executions || this.generated;
    if (list.length < 2) return; // one candidate is the SQL panel itself
    const meta = (c) => [c.generator, c.status, c.status === "success" ? `${c.rows} rows` : null, c.error].filter(Boolean).join(" · ");
    const title = `${list.length} candidate${list.length === 1 ? "" : "s"}${this.selection && this.selection.reason ? ` · selected by ${this.selection.reason}` : ""}`;
    this.candidates.replaceChildren(
      el("summary", {}, title),
      ...list.map((c) => el("div", { class: `candidate ${this.selection && c.sql === this.selection.sql ? "chosen" : ""}` },
        el("div", { class: "candidate-meta" }, meta(c)),
        el("pre", { class: "sql" }, el("code", { html: highlightSql(c.sql || "") })))),
    );
    this.candidates.hidden = false;
  }

  showRows(event) {
    if (event.error) this.showError(event.error, "The query failed");
    if (!event.columns || !event.columns.length) return;
    this.table.hidden = false;
    new ResultTable(this.table, event.columns, event.rows, event.row_count, event.truncated);
  }

  showAnswer(text) {
    this.answerRow.hidden = false;
    this.answer.innerHTML = renderAnswer(text);
  }

  // How sure the answer is: a badge and its reasons; beside a low one, the results other candidates gave.
  showConfidence(event) {
    const reasons = event.reasons || [];
    const others = (event.alternatives || []).map((alt) => {
      const rows = el("div", { class: "table-panel" });
      new ResultTable(rows, alt.columns, alt.rows, alt.row_count, false);
      return el("details", { class: "panel alternative" },
        el("summary", {}, `Another candidate's result · ${alt.votes} vote${alt.votes === 1 ? "" : "s"} · ${alt.row_count} row${alt.row_count === 1 ? "" : "s"}`),
        el("pre", { class: "sql" }, el("code", { html: highlightSql(alt.sql || "") })), rows);
    });
    this.showVerdict(el("div", { class: "confidence" },
      el("span", { class: `badge ${event.level}`, title: reasons.join("\n") }, `${event.level} confidence`),
      el("span", { class: "muted" }, reasons.join(" · "))), others);
  }

  // The data has no such thing: the answer says what is missing, and no SQL, rows or error stand beside it.
  showAbstained(event) {
    for (const part of [this.error, this.sql, this.table, this.chart, this.candidates]) part.hidden = true;
    this.showVerdict(el("div", { class: "confidence" },
      el("span", { class: "badge abstained" }, "not in this data"), el("span", { class: "muted" }, event.concept || "")), []);
  }

  showVerdict(badge, others) {
    if (this.verdict) this.verdict.forEach((node) => node.remove());
    this.verdict = [badge, ...others];
    this.answerRow.after(...this.verdict);
  }

  showChart(chart) {
    if (!chart || !window.Plotly) return;
    this.chart.hidden = false;
    const layout = {
      ...chart.figure.layout, autosize: true, height: 320,
      colorway: ["#6366f1", "#0ea5e9", "#10b981", "#f59e0b"],
      font: { family: "Inter, system-ui, sans-serif", size: 12, color: "#334155" },
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
    };
    window.Plotly.newPlot(this.chart, chart.figure.data, layout, { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["select2d", "lasso2d"] });
  }

  showError(message, title = "Could not answer") {
    this.error.hidden = false;
    this.error.replaceChildren(el("strong", {}, `${title}: `), message);
  }

  showDone(event) {
    const parts = [
      ...(event.freshness ? event.freshness.split("\n") : []),  // the data's freshness, and what it holds only in part
      `${event.seconds.toFixed(2)} s`,
      `${event.tokens.toLocaleString()} tokens`,
      event.bytes_processed != null ? `${event.bytes_processed.toLocaleString()} bytes scanned` : null,
      event.model,
      event.method,
      event.run_id ? `run ${event.run_id}` : null,
    ].filter(Boolean);
    this.footer.textContent = parts.join(" · ");
    this.footer.hidden = false;
  }
}

// ---- The answer's Markdown ------------------------------------------------------------------------
// The answer in words is Markdown (numbered lists, bold) from a template or a model, so it is treated as untrusted:
// marked (vendor/) renders it with any raw HTML shown as text, then DOMPurify (vendor/) keeps only the tags an
// answer uses: no links, images or attributes beyond a list's start, so nothing in it can run or load.
const ANSWER_TAGS = ["p", "br", "strong", "em", "del", "code", "pre", "ol", "ul", "li", "blockquote", "hr",
  "table", "thead", "tbody", "tr", "th", "td"];
const answerMarkdown = new window.marked.Marked({
  gfm: true,
  renderer: { html: ({ text }) => escapeHtml(text) },
});

function renderAnswer(text) {
  return window.DOMPurify.sanitize(answerMarkdown.parse(text || ""), { ALLOWED_TAGS: ANSWER_TAGS, ALLOWED_ATTR: ["start"] });
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// ---- Sortable, paginated result table -------------------------------------------------------------
class ResultTable {
  constructor(container, columns, rows, rowCount, truncated) {
    Object.assign(this, { container, columns, rows: rows.slice(), rowCount, truncated, page: 0, sortColumn: null, ascending: true });
    this.render();
  }

  sortBy(index) {
    this.ascending = this.sortColumn === index ? !this.ascending : true;
    this.sortColumn = index;
    const direction = this.ascending ? 1 : -1;
    this.rows.sort((a, b) => {
      const x = a[index], y = b[index];
      if (x === y) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      if (typeof x === "number" && typeof y === "number") return (x - y) * direction;
      return String(x).localeCompare(String(y), undefined, { numeric: true }) * direction;
    });
    this.page = 0;
    this.render();
  }

  render() {
    const pages = Math.max(1, Math.ceil(this.rows.length / PAGE_SIZE));
    const start = this.page * PAGE_SIZE;
    const shown = this.rows.slice(start, start + PAGE_SIZE);
    const numeric = this.columns.map((_, i) => this.rows.some((r) => typeof r[i] === "number") && this.rows.every((r) => r[i] === null || typeof r[i] === "number"));
    const head = el("tr", {}, this.columns.map((name, i) => el("th", {
      class: `${numeric[i] ? "num" : ""} ${this.sortColumn === i ? (this.ascending ? "asc" : "desc") : ""}`,
      onclick: () => this.sortBy(i), title: "Sort",
    }, name)));
    const body = shown.map((row) => el("tr", {}, row.map((value, i) => el("td", { class: `${numeric[i] ? "num" : ""} ${value === null ? "null" : ""}` }, formatValue(value)))));
    let note = `${this.rowCount.toLocaleString()} row${this.rowCount === 1 ? "" : "s"}`;
    if (this.rows.length < this.rowCount) note += ` (first ${this.rows.length.toLocaleString()} shown)`;
    if (this.truncated) note += " · truncated at the row limit";
    const pager = el("div", { class: "pager" },
      el("span", { class: "muted" }, this.rows.length ? `${start + 1}–${start + shown.length} of ${note}` : note),
      pages === 1 ? null : el("span", {},
        el("button", { class: "button small ghost", type: "button", disabled: this.page === 0 ? "" : null, onclick: () => { this.page--; this.render(); } }, "Previous"),
        el("span", { class: "muted page" }, `${this.page + 1} / ${pages}`),
        el("button", { class: "button small ghost", type: "button", disabled: this.page >= pages - 1 ? "" : null, onclick: () => { this.page++; this.render(); } }, "Next")));
    this.container.replaceChildren(el("div", { class: "table-scroll" }, el("table", { class: "results" }, el("thead", {}, head), el("tbody", {}, body))), pager);
  }
}

// ---- Asking ---------------------------------------------------------------------------------------
async function ask(question) {
  if (state.busy) return;
  setBusy(true);
  $("#empty").hidden = true;
  const view = new TurnView(question);
  $("#thread").append(view.root);
  view.root.scrollIntoView({ behavior: "smooth", block: "start" });
  const body = { question, db: $("#db").value || null, method: $("#method").value || null };
  if (state.threadId) body.thread_id = state.threadId;
  try {
    const response = await api("/query", { method: "POST", headers: { "Content-Type": "application/json", Accept: "text/event-stream" }, body: JSON.stringify(body) });
    if (!response.ok) {
      view.showError(await errorText(response));
      return;
    }
    for await (const { name, data } of readEvents(response)) handleEvent(view, name, data);
  } catch (error) {
    view.showError(String(error.message || error), "Connection failed");
  } finally {
    view.finishStages(!view.error.hidden);
    setBusy(false);
    $("#question").focus();
  }
}

function handleEvent(view, name, data) {
  switch (name) {
    case "start": setThread(data.thread_id); break;
    case "stage": view.stage(data); break;
    case "rewrite": view.showRewrite(data); break;
    case "plan": view.showPlan(data); break;
    case "step": view.showStep(data); break;
    case "candidates": view.showCandidates(data); break;
    case "revision": view.showRevision(data); break;
    case "selected": view.showSelection(data); break;
    case "sql": view.showSql(data); break;
    case "rows": view.showRows(data); break;
    case "answer": view.showAnswer(data.text); break;
    case "confidence": view.showConfidence(data); break;
    case "abstained": view.showAbstained(data); break;
    case "chart": view.showChart(data.chart); break;
    case "error": view.showError(data.message); break;
    case "done": view.showDone(data); break;
    default: break; // events this UI does not know yet are ignored
  }
}

async function errorText(response) {
  try {
    const body = await response.json();
    if (typeof body.detail === "string") return body.detail;
    if (Array.isArray(body.detail)) return body.detail.map((d) => `${(d.loc || []).slice(1).join(".")}: ${d.msg}`).join("; ");
  } catch { /* not JSON */ }
  return `HTTP ${response.status}`;
}

function setBusy(busy) {
  state.busy = busy;
  $("#ask-button").disabled = busy;
  $("#ask-button").textContent = busy ? "Working…" : "Ask";
}

function setThread(threadId) {
  state.threadId = threadId;
  const url = new URL(window.location);
  if (threadId) url.searchParams.set("thread", threadId);
  else url.searchParams.delete("thread");
  window.history.replaceState(null, "", url);
}

// A stored thread, shown again after a reload.
async function loadThread(threadId) {
  const response = await api(`/threads/${encodeURIComponent(threadId)}`);
  if (!response.ok) return setThread(null);
  const thread = await response.json();
  setThread(thread.thread_id);
  $("#empty").hidden = true;
  for (const turn of thread.turns) {
    const view = new TurnView(turn.question);
    if (turn.asked !== turn.question) view.showRewrite({ question: turn.asked });
    const steps = turn.steps || [];
    if (steps.length > 1) {
      view.showPlan({ steps: steps.map((step) => step.question) });
      steps.forEach((step, i) => view.showStep({ ...step, step: i + 1, status: "end" }));
    }
    view.showSql({ sql: turn.sql, dialect: "" });
    view.showRows({ columns: turn.columns, rows: turn.rows, row_count: turn.row_count, error: turn.error });
    view.showAnswer(turn.answer);
    if (turn.confidence) view.showConfidence(turn.confidence);
    $("#thread").append(view.root);
  }
  if (thread.turns.length) $("#db").value = thread.turns[thread.turns.length - 1].db;
}

function newThread() {
  setThread(null);
  $("#thread").querySelectorAll(".turn").forEach((node) => node.remove());
  $("#empty").hidden = false;
  $("#question").focus();
}

// ---- Schema sidebar -------------------------------------------------------------------------------
async function loadSchema(db) {
  const container = $("#schema");
  container.replaceChildren(el("p", { class: "muted" }, "Loading…"));
  const response = await api(`/schema/${encodeURIComponent(db)}`);
  if (!response.ok) {
    container.replaceChildren(el("p", { class: "error-text" }, await errorText(response)));
    return;
  }
  state.schema = await response.json();
  renderSchema();
}

function renderSchema() {
  if (!state.schema) return;
  const filter = $("#schema-filter").value.trim().toLowerCase();
  // Small schemas open fully; large ones list tables to expand.
  const openAll = filter || state.schema.tables.reduce((n, t) => n + t.columns.length, 0) <= 40;
  const tables = state.schema.tables.map((table) => {
    const tableMatch = !filter || table.name.toLowerCase().includes(filter);
    const columns = table.columns.filter((c) => tableMatch || c.name.toLowerCase().includes(filter));
    if (!columns.length) return null;
    return el("details", { class: "table", open: openAll ? "" : null },
      el("summary", {}, el("span", { class: "table-name", title: table.name }, table.name.split(".").pop()), table.row_count != null ? el("span", { class: "muted count" }, table.row_count.toLocaleString()) : null),
      table.description ? el("p", { class: "muted description" }, table.description) : null,
      el("ul", { class: "columns" }, columns.map((c) => el("li", { title: c.description || "" },
        el("span", { class: `column-name ${c.primary_key ? "pk" : ""}` }, c.name),
        el("span", { class: "column-type" }, (c.type || "").toLowerCase())))));
  }).filter(Boolean);
  $("#schema").replaceChildren(...(tables.length ? tables : [el("p", { class: "muted" }, "No match")]));
}

// ---- Start-up -------------------------------------------------------------------------------------
async function init() {
  const [listed, health] = await Promise.all([api("/databases"), api("/health").then((r) => r.json())]);
  if (!listed.ok) { // e.g. the token prompt was dismissed
    $("#schema").replaceChildren(el("p", { class: "error-text" }, await errorText(listed)));
    return;
  }
  const databases = await listed.json();
  const dbSelect = $("#db");
  dbSelect.replaceChildren(...databases.databases.map((d) => el("option", { value: d.name, selected: d.default ? "" : null }, d.name)));
  const methodSelect = $("#method");
  methodSelect.replaceChildren(...health.methods.map((m) => el("option", { value: m, selected: m === health.default_method ? "" : null }, m)));
  $("#status").textContent = `${health.model} · ${health.engine}`;

  dbSelect.addEventListener("change", () => { loadSchema(dbSelect.value); newThread(); });
  $("#schema-filter").addEventListener("input", renderSchema);
  $("#new-thread").addEventListener("click", newThread);
  const input = $("#question");
  input.addEventListener("input", () => { input.style.height = "auto"; input.style.height = `${Math.min(input.scrollHeight, 160)}px`; });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("#ask-form").requestSubmit();
    }
  });
  $("#ask-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const question = input.value.trim();
    if (!question) return;
    input.value = "";
    input.style.height = "auto";
    ask(question);
  });

  const threadId = new URL(window.location).searchParams.get("thread");
  if (threadId) await loadThread(threadId);
  if (dbSelect.value) await loadSchema(dbSelect.value);
  else $("#schema").replaceChildren(el("p", { class: "muted" }, "No database configured."));
  input.focus();
}

document.addEventListener("DOMContentLoaded", init);
