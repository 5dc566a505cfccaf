/**
 * A remote-write 2.0 symbols table as a sender builds it: '' first, each string once, labels
 * given as references into it (for tests that encode 2.0 requests).
 */
export function createSymbolTable(): { symbols: string[]; refOf: (text: string) => number } {
  const symbols = [''];
  const refOf = (text: string): number => {
    const index = symbols.indexOf(text);
    if (index !== -1) return index;
    symbols.push(text);
    return symbols.length - 1;
  };
  return { symbols, refOf };
}
