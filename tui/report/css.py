"""The HTML report's stylesheet, kept in Python so it ships inside the package without package-data settings."""

CSS = """
:root { --ink: #1b1f24; --muted: #57606a; --rule: #d0d7de; --band: #f6f8fa; --accent: #1f3b5c;
        --crit: #a40e26; --warn: #9a6700; --info: #0a5fb4; }
* { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); background: #fff; line-height: 1.5; font-size: 15px; }
body { margin: 0; }
main { max-width: 60rem; margin: 0 auto; padding: 2rem 1.5rem 4rem; }
h1 { font-size: 1.7rem; margin: 0 0 .25rem; color: var(--accent); }
h1 + p em { color: var(--muted); font-style: normal; }
h2 { font-size: 1.3rem; margin: 2.2rem 0 .8rem; padding-bottom: .3rem; border-bottom: 2px solid var(--accent); }
h3 { font-size: 1.1rem; margin: 1.6rem 0 .5rem; }
h4 { font-size: .95rem; margin: 1.1rem 0 .4rem; color: var(--muted); text-transform: uppercase;
     letter-spacing: .04em; }
h3.sev-risk, h3.sev-advice, h3.sev-note { padding-left: .6rem; border-left: 5px solid; }
h3.sev-risk { border-color: var(--crit); color: var(--crit); }
h3.sev-advice { border-color: var(--warn); color: var(--warn); }
h3.sev-note { border-color: var(--info); color: var(--info); }
table { border-collapse: collapse; min-width: 55%; margin: .4rem 0 1rem; font-size: .9rem;
        font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--rule); padding: .3rem .55rem; vertical-align: top; }
th { background: var(--band); text-align: left; }
td[style*="text-align:right"] { white-space: nowrap; }
tbody tr:nth-child(even) td { background: #fbfcfd; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85em;
       background: var(--band); padding: .05rem .3rem; border-radius: 4px; }
details { margin: .4rem 0 1.2rem; border: 1px solid var(--rule); border-radius: 6px; padding: .3rem .8rem;
          background: #fcfcfd; }
summary { cursor: pointer; font-weight: 600; color: var(--accent); }
details ul { padding-left: 1.2rem; margin: .4rem 0; }
details li { margin: .15rem 0; }
details li em { color: var(--muted); }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr)); gap: 0 1.2rem; }
.cols table { width: 100%; min-width: 0; }
figure.chart { margin: 1rem 0 1.5rem; overflow-x: auto; }
figure.chart svg { max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: .85rem; margin-top: .2rem; }
hr { border: 0; border-top: 1px solid var(--rule); margin: 2rem 0 1rem; }
hr + p { color: var(--muted); font-size: .85rem; }
@media print {
  @page { margin: 16mm 14mm; }
  html { font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  h2 { break-after: avoid; page-break-after: avoid; }
  h3, h4 { break-after: avoid; page-break-after: avoid; }
  table, figure, tr { break-inside: avoid; page-break-inside: avoid; }
  details { border: 0; padding: 0; background: none; }
  details > summary { list-style: none; }
  details > summary::-webkit-details-marker { display: none; }
  details::details-content { content-visibility: visible; display: block; }
  tbody tr:nth-child(even) td { background: none; }
}
"""
