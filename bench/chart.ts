/** A small SVG line chart: convergence time against N, with the token bucket's lower bound. */
export function convergenceChart(points: Array<{ nodes: number; convergedMs: number; boundMs: number }>): string {
  const width = 640;
  const height = 400;
  const pad = { left: 70, right: 20, top: 40, bottom: 60 };
  const maxX = Math.max(...points.map((p) => p.nodes), 1);
  const maxY = Math.max(...points.map((p) => Math.max(p.convergedMs, p.boundMs)), 1) / 1000;
  const x = (n: number) => pad.left + (n / maxX) * (width - pad.left - pad.right);
  const y = (s: number) => height - pad.bottom - (s / maxY) * (height - pad.top - pad.bottom);
  const line = (values: Array<[number, number]>) => values.map(([n, s], i) => `${i === 0 ? 'M' : 'L'}${x(n).toFixed(1)},${y(s).toFixed(1)}`).join(' ');
  const measured = points.map((p): [number, number] => [p.nodes, p.convergedMs / 1000]);
  const bound = points.map((p): [number, number] => [p.nodes, p.boundMs / 1000]);
  const ticksY = Array.from({ length: 5 }, (_, i) => (maxY * (i + 1)) / 5);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">Convergence time vs nodes joining at once (1 route table)</text>
<line x1="${pad.left}" y1="${height - pad.bottom}" x2="${width - pad.right}" y2="${height - pad.bottom}" stroke="black"/>
<line x1="${pad.left}" y1="${pad.top}" x2="${pad.left}" y2="${height - pad.bottom}" stroke="black"/>
${ticksY.map((s) => `<text x="${pad.left - 8}" y="${y(s) + 4}" text-anchor="end">${s.toFixed(0)} s</text><line x1="${pad.left}" y1="${y(s)}" x2="${width - pad.right}" y2="${y(s)}" stroke="#ddd"/>`).join('\n')}
${points.map((p) => `<text x="${x(p.nodes)}" y="${height - pad.bottom + 18}" text-anchor="middle">${p.nodes}</text>`).join('\n')}
<text x="${width / 2}" y="${height - 15}" text-anchor="middle">nodes (routes = nodes)</text>
<path d="${line(bound)}" fill="none" stroke="#888" stroke-dasharray="6 4" stroke-width="2"/>
<path d="${line(measured)}" fill="none" stroke="#1f6feb" stroke-width="2.5"/>
${measured.map(([n, s]) => `<circle cx="${x(n)}" cy="${y(s)}" r="4" fill="#1f6feb"/>`).join('\n')}
<text x="${pad.left + 12}" y="${pad.top + 14}" fill="#1f6feb">measured (podroute in the sandbox)</text>
<text x="${pad.left + 12}" y="${pad.top + 30}" fill="#888">bound: (routes - 50) / 5 per s, CreateRoute's token bucket</text>
</svg>
`;
}
