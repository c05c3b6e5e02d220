// Boost.URL's compiled part, built into gpuops_sim (Debian ships Boost.URL
// headers with libboost1.81-dev but no library package is installed).
// Only this translation unit may include boost/url/src.hpp.
#include <boost/url/src.hpp>
