// Money arrives as exact decimal strings ("1234.5"): formatted as R$ by
// string arithmetic, never through a float.
export function brl(decimal: string): string {
  const negative = decimal.startsWith("-");
  const [whole, fraction = ""] = (negative ? decimal.slice(1) : decimal).split(".");
  const cents = fraction.length > 2 ? fraction : (fraction + "00").slice(0, 2);
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ".");
  return `${negative ? "-" : ""}R$ ${grouped},${cents}`;
}

export function when(iso: string): string {
  return new Date(iso).toLocaleString("pt-BR");
}

export function day(iso: string): string {
  return new Date(iso).toLocaleDateString("pt-BR");
}
