// The one translation unit that compiles Boost.Asio, Asio SSL and Beast. Every other target
// links meshop_asio and sees BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION,
// so their sources include only declarations (Asio/Beast cost ~8 s per TU otherwise).
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
