/*
 * Reading back the numbers bnstudy writes into its own files. Every real
 * number in a result TSV is printed with "%.17g", which reads back to the
 * same double, so a cell is a number exactly when it is what "%.17g"
 * prints for the double it reads as: "0.10000000000000001", "256",
 * "1.0000000000000001e-05", "-0". Anything else, however a reader of
 * decimals would take it (" 0.5", "0.5 ", "+1", "1e400", "0x10", "nan",
 * "infinity", "1e-5" where "%.17g" prints "1.0000000000000001e-05"), is
 * not bnstudy's and is refused as the bad input it is. The writers also
 * put "-" where a row has no value (another model's score or setting)
 * and "inf" where a relative score is infinite; each is a number's
 * stand-in only where the caller allows it.
 */
#ifndef BN_NUMREAD_H
#define BN_NUMREAD_H

/* What a cell may hold besides a number. */
enum {
    NUMREAD_DASH = 1, /* "-": no value in this row */
    NUMREAD_INF = 2,  /* "inf": +infinity */
};

/* The cell s as a number: 0 with *v, 1 for an allowed "-" (*v NaN), -1
 * when s is not a number as "%.17g" writes one (nor an allowed stand-in). */
int numread_g17(const char *s, unsigned allow, double *v);

#endif
