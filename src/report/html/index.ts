/** The self-contained HTML report (design.md, `report/`): `renderHtmlReport(resultDoc)` → HTML text. */
export { renderHtmlReport, type HtmlReportOptions } from './render.js';
export { buildReportData, scriptSafeJson, LIMITS, type ReportData } from './data.js';
