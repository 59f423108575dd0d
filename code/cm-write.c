// SPDX-License-Identifier: GPL-2.0
/*
 * cm-write - one open(2) and exactly one write(2), and show what happened.
 *
 *   cm-write FILE STRING
 *
 * Opens FILE with O_WRONLY (no O_CREAT, no O_TRUNC) and writes the bytes of
 * STRING with a single write(2) call; no newline is added.  STRING may use
 * these escapes:
 *   \n newline   \t tab   \r carriage return   \\ backslash
 *   \0 a NUL byte   \xHH the byte with hex value HH (exactly two digits)
 * so `cm-write memory.limit '100\n'` writes 4 bytes and
 * `cm-write memory.limit 100` writes 3.  An empty STRING is a zero-byte
 * write(2).  Any other backslash sequence is a usage error.
 *
 * Prints on stdout one line:
 *   ok <return value of write(2)>          exit 0
 *   errno=<NAME>   (e.g. errno=EINVAL)     exit 1
 * The errno line is printed whether open(2) or write(2) failed; stderr then
 * says which.  Exit 2 on bad arguments (nothing is opened).
 *
 * Labs use it for control-file write matrices: busybox echo cannot show
 * which errno a write returned.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-write"
#define USAGE	"cm-write FILE STRING   (escapes: \\n \\t \\r \\\\ \\0 \\xHH)"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decode the escapes of @s into @out (at most strlen(@s) bytes).
 * Returns the number of bytes, or -1 on a bad escape.
 */
static long decode(const char *s, char *out)
{
	long n = 0;

	/* @cm-begin escapes */
	while (*s) {
		if (*s != '\\') {
			out[n++] = *s++;
			continue;
		}
		s++;			/* skip the backslash */
		switch (*s) {
		case 'n':  out[n++] = '\n'; break;
		case 't':  out[n++] = '\t'; break;
		case 'r':  out[n++] = '\r'; break;
		case '\\': out[n++] = '\\'; break;
		case '0':  out[n++] = '\0'; break;
		case 'x':
			if (hexval(s[1]) < 0 || hexval(s[2]) < 0)
				return -1;
			out[n++] = (char)(hexval(s[1]) * 16 + hexval(s[2]));
			s += 2;
			break;
		default:		/* unknown escape, or a trailing '\' */
			return -1;
		}
		s++;
	}
	/* @cm-end escapes */
	return n;
}

int main(int argc, char **argv)
{
	const char *file, *str;
	ssize_t ret;
	char *buf;
	long len;
	int fd;

	if (argc != 3)
		cm_usage_error(PROG, USAGE, "expected exactly 2 arguments, got %d",
			       argc - 1);
	file = argv[1];
	str = argv[2];
	if (!*file)
		cm_usage_error(PROG, USAGE, "FILE is empty");

	buf = malloc(strlen(str) + 1);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		return 1;
	}
	len = decode(str, buf);
	if (len < 0)
		cm_usage_error(PROG, USAGE, "bad escape in STRING '%s'", str);

	/* @cm-begin write */
	fd = open(file, O_WRONLY);
	if (fd < 0) {
		int err = errno;

		fprintf(stderr, "%s: open %s: %s\n", PROG, file, strerror(err));
		printf("errno=%s\n", cm_errname(err));
		return 1;
	}

	ret = write(fd, buf, len);	/* exactly one call, even for len 0 */
	if (ret < 0) {
		int err = errno;

		fprintf(stderr, "%s: write %s: %s\n", PROG, file, strerror(err));
		printf("errno=%s\n", cm_errname(err));
		return 1;
	}
	printf("ok %zd\n", ret);
	/* @cm-end write */

	/*
	 * close() can report an error too (not for cgroup files); show it
	 * without hiding the write's result.
	 */
	if (close(fd)) {
		fprintf(stderr, "%s: close %s: %s (errno=%s)\n", PROG, file,
			strerror(errno), cm_errname(errno));
		return 1;
	}
	return 0;
}
