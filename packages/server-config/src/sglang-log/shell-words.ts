/**
 * Words of a command line as a POSIX shell splits them (blanks, single quotes literal, double quotes with `\`
 * escapes, backslash outside quotes), for a launch command shown in a log. Unlike the CLI's tokeniser it refuses
 * nothing a shell would expand (a log shows what ran; `$X` is kept as text): it only reports an unclosed quote.
 */
export function shellWords(text: string): string[] | { unclosed: string } {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") {
      if (i + 1 < text.length) word += text[++i];
      inWord = true;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== c; j++) {
        if (c === '"' && text[j] === "\\" && j + 1 < text.length && '$`"\\'.includes(text[j + 1]!)) j++;
        word += text[j];
      }
      if (j >= text.length) return { unclosed: c };
      i = j;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}
