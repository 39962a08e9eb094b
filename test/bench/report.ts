// The benchmark's outputs: one text table, and an SVG chart of throughput and p99 against
// concurrency for each measured path and its floor.
import type { PointResult } from './load.ts';

export interface Series {
  name: string;
  colour: string;
  dashed?: boolean;
  points: PointResult[];
}

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [
    line(rows[0]!),
    `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`,
    ...rows.slice(1).map(line),
  ].join('\n');
}

const escape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;');

function panel(
  series: Series[],
  value: (point: PointResult) => number,
  title: string,
  unit: string,
  left: number,
): string {
  const width = 440;
  const height = 300;
  const margin = { top: 40, right: 20, bottom: 50, left: 70 };
  const concurrencies = [...new Set(series.flatMap((s) => s.points.map((p) => p.concurrency)))].sort((a, b) => a - b);
  // Log scales: the paths differ by orders of magnitude (a create against a read).
  const values = series.flatMap((s) => s.points.map(value)).filter((v) => Number.isFinite(v) && v > 0);
  const low = 10 ** Math.floor(Math.log10(Math.min(...values, 1)));
  const high = 10 ** Math.ceil(Math.log10(Math.max(...values, 10)));
  const x = (c: number) => {
    const span = Math.log2(concurrencies.at(-1)!) - Math.log2(concurrencies[0]!) || 1;
    return (
      left + margin.left + ((Math.log2(c) - Math.log2(concurrencies[0]!)) / span) * (width - margin.left - margin.right)
    );
  };
  const y = (v: number) =>
    margin.top +
    (1 - (Math.log10(v) - Math.log10(low)) / (Math.log10(high) - Math.log10(low))) *
      (height - margin.top - margin.bottom);
  const parts: string[] = [
    `<text x="${left + width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${escape(title)}</text>`,
    `<line x1="${left + margin.left}" y1="${y(low)}" x2="${left + width - margin.right}" y2="${y(low)}" stroke="#888"/>`,
    `<line x1="${left + margin.left}" y1="${margin.top}" x2="${left + margin.left}" y2="${y(low)}" stroke="#888"/>`,
    `<text x="${left + width / 2}" y="${height - 10}" text-anchor="middle" font-size="12">concurrency</text>`,
    `<text x="${left + 15}" y="${height / 2}" font-size="12" transform="rotate(-90 ${left + 15} ${height / 2})" text-anchor="middle">${escape(unit)} (log scale)</text>`,
  ];
  for (const c of concurrencies) {
    parts.push(`<text x="${x(c)}" y="${y(low) + 18}" text-anchor="middle" font-size="11">${c}</text>`);
  }
  for (let v = low; v <= high; v *= 10) {
    parts.push(
      `<text x="${left + margin.left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${v}</text>`,
      `<line x1="${left + margin.left}" y1="${y(v)}" x2="${left + width - margin.right}" y2="${y(v)}" stroke="#eee"/>`,
    );
  }
  for (const s of series) {
    const points = s.points.filter((p) => Number.isFinite(value(p)) && value(p) > 0);
    const path = points.map((p) => `${x(p.concurrency).toFixed(1)},${y(value(p)).toFixed(1)}`).join(' ');
    parts.push(
      `<polyline fill="none" stroke="${s.colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''} points="${path}"/>`,
      ...points.map(
        (p) => `<circle cx="${x(p.concurrency).toFixed(1)}" cy="${y(value(p)).toFixed(1)}" r="3" fill="${s.colour}"/>`,
      ),
    );
  }
  return parts.join('\n');
}

export function chart(series: Series[], caption: string): string {
  const legend = series
    .map(
      (s, i) =>
        `<line x1="${90 + i * 210}" y1="322" x2="${120 + i * 210}" y2="322" stroke="${s.colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>` +
        `<text x="${126 + i * 210}" y="326" font-size="12">${escape(s.name)}</text>`,
    )
    .join('\n');
  return [
    '<svg xmlns="http://www.w3.org/2000/svg" width="900" height="360" font-family="sans-serif">',
    '<rect width="900" height="360" fill="white"/>',
    panel(series, (p) => p.perSecond, 'Throughput', 'requests per second', 0),
    panel(series, (p) => p.p99Ms, 'p99 latency', 'milliseconds', 450),
    legend,
    `<text x="450" y="350" text-anchor="middle" font-size="11" fill="#555">${escape(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
