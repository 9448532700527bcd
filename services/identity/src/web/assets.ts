/**
 * The static files of identity's pages, kept as strings so `tsc -b` ships them with the code (no
 * asset copy step) and served at /assets/ (the pages' CSP allows only these, no inline code).
 */

export const DESK_CSS = `:root{--ink:#1d2433;--muted:#5b6474;--line:#d9dee7;--bg:#f4f6fa;--card:#fff;--brand:#2457c5;
--brand-ink:#fff;--danger:#b42318;--danger-bg:#fef3f2;--warn-bg:#fffaeb;--warn:#93370d;--ok-bg:#ecfdf3;--ok:#05603a;
--focus:#f59e0b;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
*{box-sizing:border-box}body{margin:0;line-height:1.5}
.skip{position:absolute;left:-999px;top:0;background:var(--card);padding:.5rem 1rem;z-index:2}.skip:focus{left:1rem}
.top{background:var(--ink);color:#fff}.bar{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.5rem;
max-width:80rem;margin:0 auto;padding:.7rem 1rem}
.brand{font-weight:700;display:flex;align-items:center;gap:.5rem;font-size:1.05rem}
.mark{display:inline-grid;place-items:center;width:1.9rem;height:1.9rem;border-radius:.45rem;background:var(--brand);
font-size:.8rem;letter-spacing:.02em}
nav ul{display:flex;flex-wrap:wrap;gap:.25rem;list-style:none;margin:0;padding:0}
nav a{color:#dfe6f5;text-decoration:none;padding:.35rem .7rem;border-radius:.35rem;display:block}
nav a:hover{background:#ffffff1f}nav a[aria-current=page]{background:#fff;color:var(--ink)}
.who{margin-left:auto;display:flex;flex-wrap:wrap;align-items:center;gap:.6rem;font-size:.9rem;color:#dfe6f5;min-width:0}
.who span{overflow-wrap:anywhere;min-width:0}
.who form{margin:0}.who button{margin:0;padding:.3rem .8rem;background:transparent;color:#fff;border-color:#ffffff80}
main{max-width:28rem;margin:2.5rem auto;padding:1.5rem;background:var(--card);border:1px solid var(--line);
border-radius:.75rem;box-shadow:0 1px 3px #1d243314}
body.wide main{max-width:min(80rem,calc(100% - 2rem));margin:1.5rem auto}.success h2{margin-top:0}
main:focus{outline:none}h1{font-size:1.5rem;margin:0 0 1rem;overflow-wrap:anywhere}h2{font-size:1.15rem;margin:2rem 0 .75rem}
label{display:block;font-weight:600;margin:.9rem 0 .25rem}.hint{color:var(--muted);font-size:.875rem;margin:.2rem 0 0}
input[type=email],input[type=password],input[type=text],input[type=number],input[type=url],select,textarea{
width:100%;padding:.55rem .65rem;border:1px solid #b8c0cc;border-radius:.4rem;font:inherit;background:#fff;color:inherit}
textarea{min-height:4.5rem}
fieldset{border:1px solid var(--line);border-radius:.5rem;margin:.9rem 0;padding:.4rem .9rem .8rem}
legend{font-weight:600;padding:0 .3rem}fieldset label{font-weight:400;display:flex;gap:.5rem;align-items:baseline;margin:.35rem 0}
button,.button{display:inline-block;margin:1rem .5rem 0 0;padding:.55rem 1.2rem;border-radius:.4rem;border:1px solid var(--brand);
background:var(--brand);color:var(--brand-ink);font:inherit;font-weight:600;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#fff;color:var(--brand)}
button.danger,.button.danger{background:var(--danger);border-color:var(--danger);color:#fff}
button.link{background:none;border:none;color:var(--danger);padding:.2rem .4rem;margin:0;font-weight:600}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.error,.warning,.success{padding:.7rem .9rem;border-radius:.45rem;margin:0 0 1rem}
.error{color:var(--danger);background:var(--danger-bg);border:1px solid #fda29b}
.warning{color:var(--warn);background:var(--warn-bg);border:1px solid #fec84b}
.success{color:var(--ok);background:var(--ok-bg);border:1px solid #75e0a7}
.secret{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}.secret input{flex:1;min-width:12rem;font-family:ui-monospace,monospace}
.secret button{margin:0}
.table-wrap{overflow-x:auto;border:1px solid var(--line);border-radius:.5rem}
table{border-collapse:collapse;width:100%;font-size:.92rem}caption{text-align:left;padding:.6rem .75rem;color:var(--muted)}
th,td{text-align:left;padding:.55rem .75rem;border-top:1px solid var(--line);vertical-align:top}
tbody .wrap{overflow-wrap:anywhere}
thead th{background:#f8f9fc;border-top:none;white-space:nowrap}td time{white-space:nowrap}
code{font-family:ui-monospace,monospace;font-size:.88em;background:#eef1f6;padding:.05rem .3rem;border-radius:.25rem}
.tag{display:inline-block;font-size:.78rem;padding:.05rem .45rem;border-radius:1rem;background:#eef1f6;margin:0 .2rem .2rem 0}
.tag.revoked{background:var(--danger-bg);color:var(--danger)}.muted{color:var(--muted)}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:0 1.25rem}
ul.plain{padding-left:1.2rem}
.actions{display:flex;flex-wrap:wrap;align-items:flex-end;gap:0 .5rem}.actions form{margin:0}
details.create{margin:0 0 1.25rem}details.create>summary{list-style:none;margin:0}
details.create>summary::-webkit-details-marker{display:none}details.create[open]>summary{background:#fff;color:var(--brand)}
details.create>section{border:1px solid var(--line);border-radius:.5rem;padding:0 1rem 1rem;margin-top:.75rem}
details.create>section>h2{margin-top:.9rem}
.filters{display:flex;flex-wrap:wrap;align-items:flex-end;gap:0 1rem;margin:0 0 1rem}.filters>div{min-width:12rem;flex:1}
.filters>div.filter-actions{flex:0 0 auto;min-width:0;display:flex;align-items:center;gap:.75rem}
.filters label{margin-top:.4rem}.filter-actions button{margin:0}
.pager{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;margin:.75rem 0 0}.pager span{color:var(--muted)}
@media (max-width:40rem){main,body.wide main{margin:0;border-radius:0;border-left:none;border-right:none}.who{margin-left:0}}
`;

/** The tab's icon: the header's mark (white "SD" on the brand blue), as SVG. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2457c5"/><text x="16" y="21" font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif" font-size="13" font-weight="700" text-anchor="middle" fill="#fff">SD</text></svg>
`;

/** Progressive enhancement only (every page works without it): copy buttons for values shown once. */
export const CONSOLE_JS = `'use strict';
document.addEventListener('click', function (event) {
  var button = event.target.closest('[data-copy]');
  if (!button) return;
  var field = document.getElementById(button.getAttribute('data-copy'));
  if (!field) return;
  var done = function () { button.textContent = 'Copied'; setTimeout(function () { button.textContent = 'Copy'; }, 2000); };
  if (navigator.clipboard) navigator.clipboard.writeText(field.value).then(done, function () { field.select(); });
  else { field.select(); document.execCommand('copy'); done(); }
});
`;
