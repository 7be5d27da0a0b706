/* An out-of-tree consumer, built by CI through pkg-config (C and C++). */
#include <errno.h>
#include <stdio.h>
#include <topdown.h>

int main(void)
{
	struct td *td = NULL;
	static struct td_named r = TD_NAMED_INIT("consumer");
	struct td_result res;
	volatile unsigned long x = 0;
	int err = td_open(&td, NULL);

	if (err < 0) { /* no PMU here: linking and the error path are proven */
		printf("consumer: %s\n", td_strerror(err));
		return err == -ENODEV ? 0 : 1;
	}
	td_named_begin(td, &r);
	for (unsigned long i = 0; i < 10000000; i++)
		x += i;
	err = td_named_end(td, &r, &res);
	printf("consumer: err=%d slots=%llu retiring=%.3f\n", err,
	       (unsigned long long)res.slots, res.l1[TD_RETIRING]);
	if (err == 0)
		err = td_report_named(stdout, td, TD_FORMAT_CSV);
	td_close(td);
	return err ? 1 : 0;
}
