/** Commands printed for a person to paste into a shell. */

/** A word as a POSIX shell reads it back unchanged: as it is when it holds no character the shell treats specially,
 * else in single quotes (a URL's `&` or `?` would otherwise end or glob the command). */
export const word = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`)
