// A small SQL highlighter: tokens to spans with classes (kw, fn, str, num, com, id). No dependencies.
"use strict";

const SQL_KEYWORDS = new Set((
  "select from where group by order having limit offset join inner left right full outer cross on using as and or not " +
  "in is null like ilike between case when then else end distinct all union intersect except with recursive over " +
  "partition window rows range preceding following current row asc desc nulls first last exists any some cast " +
  "interval true false qualify unnest struct array date timestamp datetime time extract lateral filter within"
).split(" "));

const SQL_TOKEN = /(--[^\n]*|\/\*[\s\S]*?\*\/)|('(?:[^']|'')*'?)|("(?:[^"]|"")*"?|`[^`]*`?)|(\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)|(\s+)|([\s\S])/gi;

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function highlightSql(sql) {
  let html = "";
  let match;
  SQL_TOKEN.lastIndex = 0;
  while ((match = SQL_TOKEN.exec(sql)) !== null) {
    const [token, comment, string, quoted, number, word] = match;
    if (comment) html += `<span class="com">${escapeHtml(token)}</span>`;
    else if (string) html += `<span class="str">${escapeHtml(token)}</span>`;
    else if (quoted) html += `<span class="id">${escapeHtml(token)}</span>`;
    else if (number) html += `<span class="num">${escapeHtml(token)}</span>`;
    else if (word) {
      const rest = sql.slice(SQL_TOKEN.lastIndex);
      if (SQL_KEYWORDS.has(word.toLowerCase())) html += `<span class="kw">${escapeHtml(token)}</span>`;
      else if (/^\s*\(/.test(rest)) html += `<span class="fn">${escapeHtml(token)}</span>`;
      else html += escapeHtml(token);
    } else html += escapeHtml(token);
  }
  return html;
}

// Line breaks before the main clauses, for SQL that arrives on one line.
function formatSql(sql) {
  if (sql.includes("\n")) return sql.trim();
  return sql
    .replace(/\s+(FROM|WHERE|GROUP BY|ORDER BY|HAVING|LIMIT|UNION ALL|UNION|(?:LEFT |RIGHT |INNER |FULL |CROSS )?(?:OUTER )?JOIN)\b/gi, "\n$1")
    .trim();
}
