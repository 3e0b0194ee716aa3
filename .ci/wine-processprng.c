/* Test harness only, never shipped: Debian's Wine 8 has no bcryptprimitives.dll, from which Rust's
 * standard library imports ProcessPrng (Windows 10 and newer have it). .ci/windows builds this
 * stand-in with MinGW and puts it beside a copy of hangar.exe that only the test runs. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); /* RtlGenRandom, advapi32 */

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG n = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        length -= n;
    }
    return TRUE;
}
