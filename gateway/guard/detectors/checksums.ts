// The checksums that tell a real number from a run of digits: Luhn for cards, and TR kimlik's two
// check digits. Written here because no maintained package does just these (ibantools does IBAN's).

/** Luhn's check over the digits of `s` (separators ignored). */
export function luhnValid(s: string): boolean {
  let sum = 0;
  let double = false;
  let n = 0;
  for (let i = s.length - 1; i >= 0; i--) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) continue;
    n++;
    let d = c;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return n >= 13 && n <= 19 && sum % 10 === 0;
}

/** A Turkish identity number: 11 digits, no leading 0, digits 10 and 11 checks of the first nine and ten. */
export function trKimlikValid(s: string): boolean {
  if (!/^[1-9]\d{10}$/.test(s)) return false;
  const d = [...s].map(Number);
  const odd = d[0]! + d[2]! + d[4]! + d[6]! + d[8]!;
  const even = d[1]! + d[3]! + d[5]! + d[7]!;
  if ((((odd * 7 - even) % 10) + 10) % 10 !== d[9]) return false;
  return d.slice(0, 10).reduce((a, b) => a + b, 0) % 10 === d[10];
}
