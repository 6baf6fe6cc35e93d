// The console's page: a hash route per view, each re-read from the broker's JSON API every
// second (live, without reloading). No build step, no framework: the page is plain DOM.
"use strict";

const view = document.getElementById("view");
let format = "text";  // how record keys and values are shown: text, json or hex
let actions = false;  // whether the broker lets the console change things (--console-actions)

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function table(headers, rows, id) {
  const head = el("tr", {}, ...headers.map((h) => el("th", {}, h)));
  const body = rows.map((cells) => el("tr", {}, ...cells.map((c) => (c instanceof Node && c.tagName === "TD" ? c : el("td", {}, c)))));
  return el("table", id ? { id } : {}, el("thead", {}, head), el("tbody", {}, ...body));
}

const num = (value) => el("td", { class: "num" }, value === null || value === undefined ? "-" : value);
const link = (href, text) => el("a", { href }, text);
const time = (ms) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");

// Why a request was refused: the API's JSON error, or the guard's text (401, 403, 421).
async function reason(response) {
  const text = await response.text();
  try { return JSON.parse(text).error || text; } catch { return text || response.statusText; }
}

async function post(path, body) {
  const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  if (!response.ok) alert(await reason(response));
  refresh();
}

function action(label, run) {
  const button = el("button", { type: "button" }, label);
  button.addEventListener("click", run);
  return button;
}

async function read(path) {
  const response = await fetch(path);
  if (!response.ok) throw new Error(await reason(response));
  return response.json();
}

function blob(value) {
  if (value === null) return "null";
  if (format === "hex") return Array.from(atob(value.base64), (c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join(" ");
  if (value.text === null) return `(${value.size} bytes, not UTF-8)`;
  if (format === "json") {
    try { return JSON.stringify(JSON.parse(value.text), null, 2); } catch (e) { return value.text; }
  }
  return value.text;
}

const views = {
  async topics() {
    const topics = await read("/console/api/topics");
    return [el("h2", {}, "Topics"), table(
      ["topic", "partitions", "records (end - start)", "internal", "configs"],
      topics.map((t) => [
        link(`#/topic/${encodeURIComponent(t.name)}`, t.name),
        num(t.partitions.length),
        num(t.partitions.reduce((sum, p) => sum + p.high_watermark - p.log_start_offset, 0)),
        t.internal ? "yes" : "",
        Object.entries(t.configs).map(([k, v]) => `${k}=${v}`).join(", "),
      ]), "topics")];
  },
  async topic(name) {
    const t = await read(`/console/api/topics/${encodeURIComponent(name)}`);
    return [el("h2", {}, `Topic ${t.name}`), el("p", {}, `id ${t.topic_id}`), table(
      ["partition", "leader", "replicas", "in sync", "log start", "high watermark", "log end", ""],
      t.partitions.map((p) => [num(p.partition), num(p.leader), p.replicas.join(", "), p.isr.join(", "),
        num(p.log_start_offset), num(p.high_watermark), num(p.log_end_offset),
        link(`#/records/${encodeURIComponent(t.name)}/${p.partition}`, "browse records")]), "partitions"),
      el("h3", {}, "Producers"),
      table(["partition", "producer id", "epoch", "last sequence", "last write", "open transaction from"],
        t.producers.map((p) => [num(p.partition), num(p.producer_id), num(p.epoch), num(p.last_sequence),
          time(p.last_timestamp), p.open_transaction_from === null ? "" : num(p.open_transaction_from)]), "producers")];
  },
  async records(name, partition) {
    const params = new URLSearchParams(location.hash.split("?")[1] || "");
    const query = new URLSearchParams({ partition, limit: params.get("limit") || "50" });
    if (params.get("offset")) query.set("offset", params.get("offset"));
    if (params.get("timestamp")) query.set("timestamp", params.get("timestamp"));
    const page = await read(`/console/api/topics/${encodeURIComponent(name)}/records?${query}`);
    const formats = el("p", {}, "show as: ", ...["text", "json", "hex"].map((f) => {
      const a = link(location.hash, f);
      a.addEventListener("click", (event) => { event.preventDefault(); format = f; refresh(); });
      return el("span", {}, f === format ? el("strong", {}, a) : a, " ");
    }));
    return [el("h2", {}, `Records of ${name}-${partition}`),
      el("p", {}, `from offset ${page.from_offset}; log start ${page.log_start_offset}, high watermark ${page.high_watermark}. `,
        link(`#/records/${encodeURIComponent(name)}/${partition}?offset=${page.next_offset}`, "next page"),
        " · from an offset: add ?offset=N, from a time: ?timestamp=MS"),
      formats,
      actions ? action("delete records before…", () => {
        const before = prompt(`Delete the records of ${name}-${partition} before offset:`, String(page.high_watermark));
        if (before !== null) post(`/console/api/topics/${encodeURIComponent(name)}/delete-records`,
          { partition: Number(partition), before: Number(before) });
      }) : "",
      table(["offset", "timestamp", "key", "value", "headers"], page.records.map((r) => [
        num(r.offset), time(r.timestamp), el("pre", {}, blob(r.key)), el("pre", {}, blob(r.value)),
        r.headers.map((h) => `${h.key}=${blob(h.value)}`).join(", "),
      ]), "records")];
  },
  async groups() {
    const groups = await read("/console/api/groups");
    return [el("h2", {}, "Groups"), table(
      ["group", "type", "state", "members", "lag", "rebalances"],
      groups.map((g) => [link(`#/group/${encodeURIComponent(g.group_id)}`, g.group_id), g.group_type,
        el("td", { class: `state-${g.state}` }, g.state), num(g.members.length), num(g.lag), num(g.rebalances)]), "groups")];
  },
  async group(groupId) {
    const g = await read(`/console/api/groups/${encodeURIComponent(groupId)}`);
    return [
      el("h2", {}, `Group ${g.group_id}`),
      el("p", {}, `${g.group_type} group, state `, el("span", { class: `state-${g.state}`, id: "group-state" }, g.state),
        `, protocol ${g.protocol_name || "-"}, ${g.rebalances} rebalances, total lag ${g.lag}`),
      el("h3", {}, "Members"),
      table(["member", "instance", "client", "host", "assigned partitions"], g.members.map((m) => [
        m.member_id, m.instance_id || "", m.client_id, m.client_host,
        m.assignment.map(([topic, p]) => `${topic}-${p}`).join(", ")]), "members"),
      el("h3", {}, "Committed offsets and lag"),
      table(["topic", "partition", "committed", "log end", "lag", ""], g.offsets.map((o) => [
        o.topic, num(o.partition), num(o.committed), num(o.log_end_offset), num(o.lag),
        actions && g.group_type !== "share" ? action("reset", () => {
          const to = prompt(`Reset ${g.group_id} on ${o.topic}-${o.partition} to (earliest, latest or an offset):`, "earliest");
          if (to !== null) post(`/console/api/groups/${encodeURIComponent(g.group_id)}/reset-offsets`,
            { topic: o.topic, partition: o.partition, to: /^\d+$/.test(to) ? Number(to) : to });
        }) : ""]), "offsets"),
      el("h3", {}, "Timeline"),
      table(["time", "event", "member", "what"], g.timeline.slice().reverse().map((e) => [
        time(e.at_ms), el("td", { class: `kind-${e.kind}` }, e.kind), e.member_id,
        e.count > 1 ? `${e.detail} ×${e.count} (last ${time(e.last_ms)})` : e.detail]), "timeline"),
    ];
  },
  async transactions() {
    const txns = await read("/console/api/transactions");
    return [el("h2", {}, "Transactions"), table(["transactional id", "producer id", "state"],
      txns.map((t) => [t.transactional_id, num(t.producer_id), t.state]), "transactions")];
  },
  async subjects() {
    const subjects = await read("/console/api/subjects");
    return [el("h2", {}, "Schemas"), el("p", {}, "The schema registry's subjects, read from its topic (docs/schema-registry.md)."),
      table(["subject", "versions", "latest version", "id", "type", "compatibility"], subjects.map((s) => [
        link(`#/subject/${encodeURIComponent(s.subject)}`, s.subject), num(s.versions),
        s.deleted ? "deleted" : num(s.latest_version), num(s.latest_id), s.schema_type, s.level]), "subjects")];
  },
  async subject(name) {
    const params = new URLSearchParams(location.hash.split("?")[1] || "");
    const query = new URLSearchParams();
    for (const key of ["from", "to"]) if (params.get(key)) query.set(key, params.get(key));
    const s = await read(`/console/api/subjects/${encodeURIComponent(name)}?${query}`);
    const diff = el("pre", { id: "diff" }, ...s.diff.lines.map((line) =>
      el("span", { class: line.startsWith("+") ? "added" : line.startsWith("-") ? "removed" : "" }, line + "\n")));
    return [el("h2", {}, `Subject ${s.subject}`),
      el("p", {}, `compatibility ${s.level}, mode ${s.mode}`),
      table(["version", "id", "type", "references", "", ""], s.versions.map((v) => [
        num(v.version), num(v.id), v.schema_type + (v.deleted ? " (soft-deleted)" : ""),
        v.references.map((r) => `${r.name} = ${r.subject} v${r.version}`).join(", "),
        link(`#/subject/${encodeURIComponent(name)}?from=${s.diff.from}&to=${v.version}`, `diff from v${s.diff.from}`),
        link(`#/subject/${encodeURIComponent(name)}?from=${v.version}&to=${s.diff.to}`, `diff to v${s.diff.to}`)]), "versions"),
      el("h3", {}, `Version ${s.diff.from} to version ${s.diff.to}`),
      s.diff.lines.length ? diff : el("p", {}, "no difference"),
      el("h3", {}, `Version ${s.diff.to}`),
      el("pre", { id: "schema" }, (s.versions.find((v) => v.version === s.diff.to) || {}).schema || "")];
  },
  async "test-broker"() {
    const state = await read("/console/api/test-broker");
    const clock = state.clock;
    return [
      el("h2", {}, "The broker's clock"),
      el("p", { id: "clock" }, `${time(clock.now_ms)}${clock.frozen ? " (frozen)" : ""}, `,
        `${clock.offset_ms} ms ahead of wall time (control: kafka-shim ctl clock ...)`),
      el("h3", {}, "Fault rules"),
      table(["rule", "match and action"], state.rules.map((rule) => [num(rule.id), JSON.stringify(rule)]), "rules"),
      el("h3", {}, "Latest firings"),
      table(["firing"], state.firings.slice().reverse().map((f) => [JSON.stringify(f)]), "firings"),
    ];
  },
};

// Clients a broker without --emulate served versions Kafka 4 removed (KIP-896): on every page.
function oldVersionClients(clients) {
  if (!clients.length) return [];
  return [el("h3", {}, "Clients using versions Kafka 4 removed (KIP-896)"),
    el("p", {}, "Served here; Kafka 4.x (and --emulate 4.x) closes their connections."),
    table(["client id", "API", "versions", "peer", "requests", "last seen"], clients.map((c) => [
      c.client_id, c.api, c.versions.join(", "), c.peer, num(c.requests), time(c.last_seen_ms)]), "old-version-clients")];
}

async function refresh() {
  const [path] = location.hash.replace(/^#\//, "").split("?");
  const [name, ...args] = path.split("/").map(decodeURIComponent);
  const render = views[name] || views.topics;
  try {
    // The overview asks DESCRIBE on the cluster: without it the views this user may see still show.
    const overview = await read("/console/api/overview").catch((error) => ({ refused: String(error) }));
    actions = overview.actions;
    document.getElementById("footer").textContent = "Live: refreshed every second from the broker's own state. " +
      (actions ? "Actions are on (--console-actions)." : "Read-only.");
    document.getElementById("overview").textContent = overview.refused ||
      `${overview.bootstrap} · ${overview.listeners.join(", ")} · node ${overview.node_id} · cluster ${overview.cluster_id} · ${overview.storage}`;
    view.replaceChildren(...(await render(...args)), ...oldVersionClients(overview.old_version_clients || []));
  } catch (error) {
    view.replaceChildren(el("p", { class: "error" }, String(error)));
  }
}

window.addEventListener("hashchange", refresh);
refresh();
setInterval(refresh, 1000);
