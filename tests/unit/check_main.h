/*
 * check_main.h — the main() every unit suite shares.
 *
 * A suite file defines `static Suite *make_suite(void)` and then includes
 * this header with LUMEN_CHECK_MAIN defined once, at the bottom:
 *
 *     #define LUMEN_CHECK_MAIN
 *     #include "check_main.h"
 *
 * Tests run in-process (CK_FORK=no unless the caller says otherwise) so that
 * AddressSanitizer's leak check sees the whole run.
 */
#ifndef LUMEN_CHECK_MAIN_H
#define LUMEN_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#ifdef LUMEN_CHECK_MAIN
static Suite *make_suite(void);

int main(void)
{
	SRunner *sr = srunner_create(make_suite());
	if (getenv("CK_FORK") == NULL)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
#endif
#endif
