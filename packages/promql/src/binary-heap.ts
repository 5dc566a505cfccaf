/**
 * Go's container/heap over an array with a `less` function, operation for operation, so that
 * topk/bottomk keep exactly the elements Prometheus keeps when values tie.
 */
function heapUp<T>(h: T[], j: number, less: (a: T, b: T) => boolean): void {
  for (;;) {
    const i = Math.trunc((j - 1) / 2);
    if (i === j || !less(h[j]!, h[i]!)) break;
    [h[i], h[j]] = [h[j]!, h[i]!];
    j = i;
  }
}

function heapDown<T>(h: T[], i0: number, n: number, less: (a: T, b: T) => boolean): void {
  let i = i0;
  for (;;) {
    const j1 = 2 * i + 1;
    if (j1 >= n || j1 < 0) break;
    let j = j1;
    const j2 = j1 + 1;
    if (j2 < n && less(h[j2]!, h[j1]!)) j = j2;
    if (!less(h[j]!, h[i]!)) break;
    [h[i], h[j]] = [h[j]!, h[i]!];
    i = j;
  }
}

export function heapPush<T>(h: T[], x: T, less: (a: T, b: T) => boolean): void {
  h.push(x);
  heapUp(h, h.length - 1, less);
}

export function heapPop<T>(h: T[], less: (a: T, b: T) => boolean): T {
  const n = h.length - 1;
  [h[0], h[n]] = [h[n]!, h[0]!];
  heapDown(h, 0, n, less);
  return h.pop()!;
}
